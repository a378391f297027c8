{#-
    Stressor handled here: duplicate_current. A failed SCD load left the previous version open, so
    some accounts have two rows with is_current = true and valid_to = NULL. The validity windows
    are rebuilt from the data: versions of an account are ordered by valid_from (ties broken by
    account_history_id), valid_to is the next version's valid_from and only the latest version is
    current. On clean rows this reproduces the published valid_to / is_current exactly.
-#}
with

source as (

    select * from {{ source('crm', 'account_history') }}

),

sequenced as (

    select
        *,
        row_number() over (
            partition by account_id order by valid_from, account_history_id
        ) as version_number,
        lead(valid_from) over (
            partition by account_id order by valid_from, account_history_id
        ) as next_valid_from

    from source

),

renamed as (

    select
        ---------- ids
        account_history_id,
        {{ normalize_key('account_id') }} as account_id,
        {{ normalize_key('owner_id') }} as owner_id,

        ---------- text
        account_type,
        rating,
        industry,
        segment,
        customer_priority,
        sla_tier,

        ---------- numerics
        version_number,
        {{ to_money('annual_revenue') }} as annual_revenue_usd,
        number_of_employees,

        ---------- booleans
        is_active,
        next_valid_from is null as is_current,
        coalesce(is_current, false) and next_valid_from is not null as is_duplicate_current_fixed,

        ---------- timestamps
        valid_from,
        next_valid_from as valid_to

    from sequenced

)

select * from renamed
