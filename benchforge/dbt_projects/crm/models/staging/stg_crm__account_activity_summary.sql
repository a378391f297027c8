{#- The source system's own per-account rollup; kept for reconciliation against int_account_activity_rolled_up. -#}
with

source as (

    select * from {{ source('crm', 'account_activity_summary') }}

),

renamed as (

    select
        ---------- ids
        {{ normalize_key('account_id') }} as account_id,

        ---------- numerics
        contact_count,
        open_opportunity_count,
        won_opportunity_count,
        {{ to_money('won_amount_usd') }} as won_amount_usd,
        {{ to_money('open_pipeline_usd') }} as open_pipeline_usd,
        task_count,
        event_count,
        case_count,
        open_case_count,

        ---------- timestamps
        last_activity_at

    from source

)

select * from renamed
