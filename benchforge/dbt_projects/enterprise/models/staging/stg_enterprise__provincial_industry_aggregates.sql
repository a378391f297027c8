-- Published provincial totals (ten thousand CNY, derived upstream from the clean KPIs).
-- Stressor handled: total_value exported as formatted text (`111,349.21`,
-- `139.92 ten thousand CNY`): separators and the unit suffix are stripped before the cast.
with

source as (

    select * from {{ source('enterprise', 'provincial_industry_aggregates') }}

),

parsed as (

    select
        *,
        try_cast(
            replace(
                regexp_replace(trim(cast(total_value as varchar)), '\s*ten thousand CNY$', ''),
                ',',
                ''
            ) as double
        ) as total_value_parsed

    from source

),

renamed as (

    select
        ---------- ids
        aggregate_id,
        trim(province) as province,
        upper(trim(industry_code)) as industry_code,
        upper(trim(indicator)) as indicator,

        ---------- attributes
        region,
        cast(period as date) as period,
        unit,

        ---------- numerics
        reporting_companies,
        round(total_value_parsed, 2) as total_value,
        cast(total_value as varchar) as total_value_raw,
        round(total_value_parsed * 1e4, 2) as total_value_cny,

        ---------- data quality flags
        total_value is not null
        and try_cast(cast(total_value as varchar) as double) is null as is_total_value_text_formatted

    from parsed

)

select * from renamed
