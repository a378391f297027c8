-- Published national totals (hundred million CNY, derived upstream from the clean KPIs).
with

source as (

    select * from {{ source('enterprise', 'national_industry_aggregates') }}

),

renamed as (

    select
        ---------- ids
        aggregate_id,
        upper(trim(industry_code)) as industry_code,
        upper(trim(indicator)) as indicator,

        ---------- attributes
        cast(period as date) as period,
        unit,

        ---------- numerics
        reporting_companies,
        total_value,
        mean_value,
        round(total_value * 1e8, 2) as total_value_cny,
        round(mean_value * 1e8, 2) as mean_value_cny

    from source

)

select * from renamed
