-- Each usable company amount compared with its industry's published national mean and its
-- province-industry published mean, and ranked within its industry and quarter.
with

kpis as (

    select * from {{ ref('int_company_kpis_deduplicated') }}

),

companies as (

    select * from {{ ref('int_companies_enriched') }}

),

national as (

    select * from {{ ref('stg_enterprise__national_industry_aggregates') }}

),

provincial as (

    select * from {{ ref('stg_enterprise__provincial_industry_aggregates') }}

),

usable_amounts as (

    select
        kpis.company_period_indicator_id,
        kpis.company_id,
        companies.province,
        companies.industry_code,
        companies.scale_category,
        kpis.period,
        kpis.indicator,
        kpis.value_canonical as value_cny

    from kpis
    inner join companies
        on kpis.company_id = companies.company_id
    where kpis.value_kind = 'amount'
        and kpis.value_status = 'OK'
        and companies.industry_code is not null

),

final as (

    select
        ---------- ids
        usable_amounts.company_period_indicator_id,
        usable_amounts.company_id,

        ---------- attributes
        usable_amounts.province,
        usable_amounts.industry_code,
        usable_amounts.scale_category,
        usable_amounts.period,
        usable_amounts.indicator,

        ---------- value and benchmarks (CNY)
        usable_amounts.value_cny,
        national.mean_value_cny as national_industry_mean_cny,
        round(provincial.total_value_cny / nullif(provincial.reporting_companies, 0), 2)
            as provincial_industry_mean_cny,
        round(usable_amounts.value_cny / nullif(national.mean_value_cny, 0), 4) as index_vs_national_mean,
        round(
            usable_amounts.value_cny
            / nullif(provincial.total_value_cny / nullif(provincial.reporting_companies, 0), 0),
            4
        ) as index_vs_provincial_mean,
        round(usable_amounts.value_cny / nullif(national.total_value_cny, 0), 6) as share_of_national_total,

        ---------- rank within industry and quarter
        rank() over (
            partition by usable_amounts.industry_code, usable_amounts.period, usable_amounts.indicator
            order by usable_amounts.value_cny desc
        ) as industry_rank,
        count(*) over (
            partition by usable_amounts.industry_code, usable_amounts.period, usable_amounts.indicator
        ) as industry_peers

    from usable_amounts
    left join national
        on usable_amounts.industry_code = national.industry_code
        and usable_amounts.period = national.period
        and usable_amounts.indicator = national.indicator
    left join provincial
        on usable_amounts.province = provincial.province
        and usable_amounts.industry_code = provincial.industry_code
        and usable_amounts.period = provincial.period
        and usable_amounts.indicator = provincial.indicator

)

select * from final
