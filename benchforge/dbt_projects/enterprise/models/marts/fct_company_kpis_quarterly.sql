with

kpis as (

    select * from {{ ref('int_company_kpis_deduplicated') }}

),

growth as (

    select * from {{ ref('int_company_kpis_growth') }}

),

final as (

    select
        ---------- ids
        kpis.company_period_indicator_id,
        kpis.company_id,
        kpis.chosen_kpi_id,

        ---------- company attributes
        kpis.region,
        kpis.province,
        kpis.industry_code,
        kpis.scale_category,

        ---------- period and indicator
        kpis.period,
        kpis.fiscal_year,
        kpis.fiscal_quarter,
        kpis.indicator,
        kpis.value_kind,
        kpis.canonical_unit,

        ---------- value (canonical unit)
        kpis.value_canonical as value,
        kpis.value_status,
        kpis.flagged_value_canonical as flagged_value,
        kpis.chosen_source,
        kpis.chosen_unit,
        kpis.reported_rows,
        kpis.usable_rows,
        kpis.sources_reporting,
        kpis.sources,
        kpis.usable_value_spread,

        ---------- period over period
        growth.previous_quarter_value,
        growth.previous_year_value,
        growth.qoq_change,
        growth.yoy_change,
        growth.qoq_growth_pct,
        growth.yoy_growth_pct

    from kpis
    left join growth
        on kpis.company_period_indicator_id = growth.company_period_indicator_id

)

select * from final
