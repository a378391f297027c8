-- The national company index, derived upstream from the clean regional tables (before any
-- stressor): used to fill and check the regional profiles.
with

source as (

    select * from {{ source('enterprise', 'company_index') }}

),

renamed as (

    select
        ---------- ids
        upper(trim(company_id)) as company_id,
        upper(trim(credit_code)) as credit_code,
        stock_code,

        ---------- attributes
        company_name,
        region,
        trim(province) as province,
        upper(trim(industry_code)) as industry_code,
        ownership_type,
        scale_category,
        listing_status,
        legal_representative,

        ---------- numerics
        round(registered_capital, 2) as registered_capital_wan_cny,

        ---------- dates
        cast(established_date as date) as established_date

    from source

)

select * from renamed
