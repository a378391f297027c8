-- Provincial totals rebuilt from the company level: for each province, industry, period and
-- amount indicator, the usable (status OK) deduplicated company values in CNY summed.
with

kpis as (

    select * from {{ ref('int_company_kpis_deduplicated') }}

),

companies as (

    select * from {{ ref('int_companies_enriched') }}

),

usable_amounts as (

    select
        companies.region,
        companies.province,
        companies.industry_code,
        kpis.period,
        kpis.indicator,
        kpis.company_id,
        kpis.value_canonical

    from kpis
    inner join companies
        on kpis.company_id = companies.company_id
    where kpis.value_kind = 'amount'
        and kpis.value_status = 'OK'
        and companies.industry_code is not null

),

final as (

    select
        province || ':' || industry_code || ':' || strftime(period, '%Y-%m-%d') || ':' || indicator as aggregate_id,
        region,
        province,
        industry_code,
        period,
        indicator,
        count(*) as reporting_companies,
        {{ sum_exact('value_canonical') }} as total_value_cny,
        round({{ sum_exact('value_canonical') }} / count(*), 2) as mean_value_cny

    from usable_amounts
    group by region, province, industry_code, period, indicator

)

select * from final
