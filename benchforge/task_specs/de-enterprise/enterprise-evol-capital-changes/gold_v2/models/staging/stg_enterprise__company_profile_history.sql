-- Stressor handled: duplicate "current" registration versions (the previous version was left
-- open). The chain is rebuilt from valid_from: each version is valid until the next one starts
-- and only the latest version is current. Every history row is kept.
with

source as (

    select * from {{ source('enterprise', 'company_profile_history') }}

),

sequenced as (

    select
        *,
        lead(valid_from) over (
            partition by upper(trim(company_id))
            order by valid_from, change_id
        ) as next_valid_from,
        row_number() over (
            partition by upper(trim(company_id))
            order by valid_from, change_id
        ) as version_number

    from source

),

renamed as (

    select
        ---------- ids
        change_id,
        upper(trim(company_id)) as company_id,

        ---------- attributes
        company_name,
        legal_representative,
        listing_status,
        change_type,
        approved_by,

        ---------- numerics
        round(registered_capital, 2) as registered_capital_wan_cny,
        round(round(registered_capital, 2) * 1e4, 2) as registered_capital_cny,

        ---------- validity
        version_number,
        cast(valid_from as timestamp) as valid_from,
        cast(next_valid_from as timestamp) as valid_to,
        next_valid_from is null as is_current,

        ---------- data quality flags
        coalesce(is_current, false) and next_valid_from is not null as is_duplicate_current_repaired

    from sequenced

)

select * from renamed
