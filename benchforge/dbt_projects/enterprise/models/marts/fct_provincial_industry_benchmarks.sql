-- Provincial benchmarks per province, industry, quarter and amount indicator: the published
-- provincial aggregate (parsed from text where needed, converted to CNY), its share of the
-- national total, and the total rebuilt from the usable company values.
with

provincial as (

    select * from {{ ref('stg_enterprise__provincial_industry_aggregates') }}

),

national as (

    select * from {{ ref('stg_enterprise__national_industry_aggregates') }}

),

computed as (

    select * from {{ ref('int_province_industry_kpis_aggregated') }}

),

final as (

    select
        ---------- ids
        provincial.aggregate_id,
        provincial.province,
        provincial.industry_code,
        provincial.indicator,

        ---------- attributes
        provincial.region,
        provincial.period,

        ---------- published (CNY)
        provincial.reporting_companies as published_reporting_companies,
        provincial.total_value_cny as published_total_value_cny,
        round(provincial.total_value_cny / nullif(provincial.reporting_companies, 0), 2) as published_mean_value_cny,
        national.total_value_cny as national_total_value_cny,
        round(provincial.total_value_cny / nullif(national.total_value_cny, 0), 4) as share_of_national,
        round(
            (provincial.total_value_cny / nullif(provincial.reporting_companies, 0))
            / nullif(national.mean_value_cny, 0),
            4
        ) as mean_index_vs_national,

        ---------- rebuilt from company values (CNY)
        coalesce(computed.reporting_companies, 0) as computed_reporting_companies,
        computed.total_value_cny as computed_total_value_cny,
        round(computed.total_value_cny / nullif(provincial.total_value_cny, 0), 4) as computed_coverage_ratio,

        ---------- data quality
        provincial.is_total_value_text_formatted

    from provincial
    left join national
        on provincial.industry_code = national.industry_code
        and provincial.period = national.period
        and provincial.indicator = national.indicator
    left join computed
        on provincial.aggregate_id = computed.aggregate_id

)

select * from final
