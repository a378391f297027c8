{#-
    Stressor handled here: duplicate_current (see stg_crm__account_history). Versions of an
    opportunity are ordered by valid_from (ties broken by opportunity_history_id); valid_to is the
    next version's valid_from and only the latest version is current, so the current pipeline is
    not double-counted.
-#}
with

source as (

    select * from {{ source('crm', 'opportunity_stage_history') }}

),

sequenced as (

    select
        *,
        row_number() over (
            partition by opportunity_id order by valid_from, opportunity_history_id
        ) as version_number,
        lead(valid_from) over (
            partition by opportunity_id order by valid_from, opportunity_history_id
        ) as next_valid_from

    from source

),

renamed as (

    select
        ---------- ids
        opportunity_history_id,
        {{ normalize_key('opportunity_id') }} as opportunity_id,
        {{ normalize_key('last_modified_by_id') }} as last_modified_by_id,

        ---------- text
        stage,
        forecast_category,
        currency,

        ---------- numerics
        version_number,
        probability,
        {{ to_money('amount') }} as amount,
        {{ to_money('expected_revenue') }} as expected_revenue,
        {{ to_money('opportunity_amount') }} as opportunity_amount,

        ---------- booleans
        next_valid_from is null as is_current,
        coalesce(is_current, false) and next_valid_from is not null as is_duplicate_current_fixed,

        ---------- timestamps
        valid_from,
        next_valid_from as valid_to

    from sequenced

)

select * from renamed
