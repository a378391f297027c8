{#-
    The four regional profile tables share one schema and are cleaned by the same SQL (only the
    source differs), so that they union cleanly downstream. Stressors handled (each region has
    its own, the checks run everywhere):
      * registered_capital exported as text (`1,234.50`, `123.40 万元`): separators and the
        unit suffix are stripped before the cast (the unit is 万元 either way); raw text kept.
      * employees outliers (x100 typos): scale_category was derived from the true headcount, so
        a headcount outside its size band (or >= 100,000) is flagged; when dividing by 100 puts it
        back in the band it is repaired, otherwise kept as reported.
      * blank industry_code / legal_representative stay NULL here and are flagged (they are
        filled from the national company index in int_companies_enriched).

    One macro called by the four thin models stg_enterprise__company_profiles_<region>
    (region: central, east, northeast, west), each reading raw.company_profiles_<region>.
-#}
{% macro stg_enterprise__company_profiles(region) -%}
with

source as (

    select * from {{ source('enterprise', 'company_profiles_' ~ region) }}

),

parsed as (

    select
        *,
        try_cast(
            replace(
                regexp_replace(trim(cast(registered_capital as varchar)), '\s*万元$', ''),
                ',',
                ''
            ) as double
        ) as registered_capital_parsed,
        case
            when employees >= 1000 then 'Large'
            when employees >= 300 then 'Medium'
            when employees >= 20 then 'Small'
            else 'Micro'
        end as employees_band,
        case
            when employees // 100 >= 1000 then 'Large'
            when employees // 100 >= 300 then 'Medium'
            when employees // 100 >= 20 then 'Small'
            else 'Micro'
        end as employees_div100_band

    from source

),

flagged as (

    select
        *,
        coalesce(employees_band <> scale_category or employees >= 100000, false)
            as is_employees_outlier

    from parsed

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
        province_cn,
        trim(admin_code) as admin_code,
        upper(trim(industry_code)) as industry_code,
        industry_name,
        ownership_type,
        scale_category,
        listing_status,
        legal_representative,
        is_high_tech,
        contact_phone,

        ---------- numerics
        round(registered_capital_parsed, 2) as registered_capital_wan_cny,
        cast(registered_capital as varchar) as registered_capital_raw,
        cast(
            case
                when is_employees_outlier
                    and employees % 100 = 0
                    and employees_div100_band = scale_category
                    then employees // 100
                else employees
            end as integer
        ) as employees,
        cast(employees as integer) as employees_reported,

        ---------- dates
        cast(established_date as date) as established_date,

        ---------- data quality flags
        registered_capital is not null
        and try_cast(cast(registered_capital as varchar) as double) is null
            as is_registered_capital_text_formatted,
        is_employees_outlier,
        industry_code is null as is_industry_code_missing,
        legal_representative is null as is_legal_representative_missing

    from flagged

)

select * from renamed
{%- endmacro %}
