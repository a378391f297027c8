{#-
    Stressor handled here: missing_values on account_id (web-to-case): kept NULL and flagged
    is_account_missing (int_cases_sla_evaluated backfills it from the case's contact).
-#}
with

source as (

    select * from {{ source('crm', 'cases') }}

),

renamed as (

    select
        ---------- ids
        case_id,
        case_number,
        {{ normalize_key('contact_id') }} as contact_id,
        {{ normalize_key('account_id') }} as account_id,
        {{ normalize_key('owner_id') }} as owner_id,
        {{ normalize_key('product_id') }} as product_id,

        ---------- text
        origin,
        case_type,
        reason,
        priority,
        status,
        subject,
        description,
        country,

        ---------- numerics
        csat_score,

        ---------- booleans
        is_escalated,
        sla_breached,
        status = 'Closed' as is_closed,
        account_id is null as is_account_missing,

        ---------- timestamps
        created_at,
        closed_at

    from source

)

select * from renamed
