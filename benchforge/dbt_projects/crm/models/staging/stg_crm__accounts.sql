{#-
    Stressors handled here:
    - type_coercion on annual_revenue: the column is text; values such as '1,234,567.00' or
      '523.40 USD' are parsed back to a number (thousands separators and the unit suffix removed).
    - missing_values on industry: kept NULL and flagged (int_accounts_enriched backfills it from
      the current history version).
-#}
with

source as (

    select * from {{ source('crm', 'accounts') }}

),

renamed as (

    select
        ---------- ids
        account_id,
        {{ normalize_key('owner_id') }} as owner_id,

        ---------- text
        account_name,
        country,
        locale,
        currency,
        billing_street,
        billing_city,
        billing_postal_code,
        phone,
        website,
        industry,
        account_type,
        rating,
        ownership,
        segment,
        customer_priority,
        sla_tier,
        description,
        annual_revenue as annual_revenue_raw,

        ---------- numerics
        {{ to_money(parse_number('annual_revenue')) }} as annual_revenue_usd,
        number_of_employees,

        ---------- booleans
        is_active,
        annual_revenue is not null
            and try_cast(annual_revenue as double) is null as is_annual_revenue_coerced,
        industry is null as is_industry_missing,

        ---------- timestamps
        created_at

    from source

)

select * from renamed
