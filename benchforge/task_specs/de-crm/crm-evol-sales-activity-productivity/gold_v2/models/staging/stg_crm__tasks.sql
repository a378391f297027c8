{#-
    Stressors handled here:
    - timezone_mismatch on completed_at: a sync wrote the contact country's local time instead of
      UTC (local = UTC + utc_offset_hours). Only one case is recognisable from the data: a
      completed_at before created_at, which happens when a negative (Americas) offset moved it
      earlier. Those rows are shifted back (completed_at - utc_offset_hours) and flagged
      is_completed_at_tz_corrected. Rows shifted by a positive offset, or by a negative offset that
      still leaves them after created_at, look exactly like clean rows and cannot be told apart;
      they are left as published.
    - missing_values on owner_id: kept NULL, flag is_owner_missing.
    Calls: call_duration_minutes is the call length in minutes (2 decimals); is_call marks Call
    tasks and is_connected_call the calls whose disposition is Connected (a live conversation).
-#}
with

source as (

    select * from {{ source('crm', 'tasks') }}

),

countries as (

    select country_code, utc_offset_hours from {{ source('crm', 'countries') }}

),

flagged as (

    select
        source.*,
        coalesce(
            source.completed_at < source.created_at and countries.utc_offset_hours < 0, false
        ) as is_completed_at_tz_corrected,
        countries.utc_offset_hours

    from source
    left join countries
        on countries.country_code = source.country

),

renamed as (

    select
        ---------- ids
        task_id,
        {{ normalize_key('contact_id') }} as contact_id,
        {{ normalize_key('account_id') }} as account_id,
        {{ normalize_key('owner_id') }} as owner_id,

        ---------- text
        task_subtype,
        subject,
        priority,
        status,
        call_disposition,
        country,
        description,

        ---------- numerics
        call_duration_seconds,
        round(call_duration_seconds / 60.0, 2) as call_duration_minutes,

        ---------- booleans
        is_high_priority,
        is_reminder_set,
        is_completed_at_tz_corrected,
        owner_id is null as is_owner_missing,
        coalesce(task_subtype = 'Call', false) as is_call,
        coalesce(task_subtype = 'Call' and call_disposition = 'Connected', false) as is_connected_call,

        ---------- dates
        created_at,
        activity_date,
        case
            when is_completed_at_tz_corrected
                then completed_at - to_seconds(cast(round(utc_offset_hours * 3600) as bigint))
            else completed_at
        end as completed_at,
        completed_at as completed_at_raw

    from flagged

)

select * from renamed
