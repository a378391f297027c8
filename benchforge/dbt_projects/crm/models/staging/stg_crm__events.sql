{#-
    Stressor handled here: timezone_mismatch on start_at. A calendar sync wrote the contact
    country's local time instead of UTC, while end_at (= start_at + duration_minutes) was
    published from the clean UTC start. The anomaly is therefore recognisable exactly: when
    end_at - start_at <> duration_minutes, the UTC start is end_at - duration_minutes. Those rows
    are flagged is_start_at_tz_corrected; start_at_shift_hours is the offset that was removed
    (the contact country's UTC offset).
-#}
with

source as (

    select * from {{ source('crm', 'events') }}

),

flagged as (

    select
        *,
        end_at - to_minutes(cast(duration_minutes as bigint)) as start_at_utc,
        date_diff('second', start_at, end_at) <> duration_minutes * 60 as is_start_at_tz_corrected

    from source

),

renamed as (

    select
        ---------- ids
        event_id,
        {{ normalize_key('contact_id') }} as contact_id,
        {{ normalize_key('account_id') }} as account_id,
        {{ normalize_key('owner_id') }} as owner_id,

        ---------- text
        event_type,
        subject,
        location,
        show_as,
        country,
        timezone,
        description,

        ---------- numerics
        duration_minutes,
        case
            when is_start_at_tz_corrected
                then round(date_diff('second', start_at_utc, start_at) / 3600.0, 2)
            else 0
        end as start_at_shift_hours,

        ---------- booleans
        is_all_day_event,
        is_private,
        is_start_at_tz_corrected,

        ---------- timestamps
        created_at,
        case when is_start_at_tz_corrected then start_at_utc else start_at end as start_at,
        end_at,
        start_at as start_at_raw

    from flagged

)

select * from renamed
