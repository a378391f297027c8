-- National benchmarks per industry, quarter and amount indicator: the published national
-- aggregate (hundred million CNY, converted to CNY) next to the sum of the published provincial
-- aggregates (ten thousand CNY, converted) and the total rebuilt from the usable company
-- values, with the coverage of the rebuilt total.
with

national as (

    select * from {{ ref('stg_enterprise__national_industry_aggregates') }}

),

provincial as (

    select
        industry_code,
        period,
        indicator,
        count(*) as provinces_reporting,
        sum(reporting_companies) as provincial_reporting_companies,
        {{ sum_exact('total_value_cny') }} as provincial_total_value_cny

    from {{ ref('stg_enterprise__provincial_industry_aggregates') }}
    group by industry_code, period, indicator

),

computed as (

    select * from {{ ref('int_industry_kpis_aggregated') }}

),

industries as (

    select * from {{ ref('stg_enterprise__industries') }}

),

final as (

    select
        ---------- ids
        national.aggregate_id,
        national.industry_code,
        national.indicator,

        ---------- attributes
        industries.industry_name,
        industries.sector,
        national.period,
        cast(year(national.period) as integer) as fiscal_year,
        cast(quarter(national.period) as integer) as fiscal_quarter,

        ---------- published national (CNY)
        national.reporting_companies as published_reporting_companies,
        national.total_value_cny as published_total_value_cny,
        national.mean_value_cny as published_mean_value_cny,

        ---------- published provincial, summed (CNY)
        coalesce(provincial.provinces_reporting, 0) as provinces_reporting,
        cast(provincial.provincial_reporting_companies as bigint) as provincial_reporting_companies,
        provincial.provincial_total_value_cny,
        round(provincial.provincial_total_value_cny - national.total_value_cny, 2) as provincial_vs_national_gap_cny,

        ---------- rebuilt from company values (CNY)
        coalesce(computed.reporting_companies, 0) as computed_reporting_companies,
        computed.total_value_cny as computed_total_value_cny,
        computed.mean_value_cny as computed_mean_value_cny,
        computed.median_value_cny as computed_median_value_cny,
        round(computed.total_value_cny / nullif(national.total_value_cny, 0), 4) as computed_coverage_ratio,
        round(coalesce(computed.reporting_companies, 0) / national.reporting_companies, 4) as company_coverage_ratio

    from national
    left join provincial
        on national.industry_code = provincial.industry_code
        and national.period = provincial.period
        and national.indicator = provincial.indicator
    left join computed
        on national.aggregate_id = computed.aggregate_id
    left join industries
        on national.industry_code = industries.industry_code

)

select * from final
