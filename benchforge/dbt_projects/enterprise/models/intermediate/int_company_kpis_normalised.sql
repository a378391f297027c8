-- Every reported KPI row in the canonical unit of the metric dictionary, with the indicator's
-- definition, the fiscal calendar of the period, and the ranks used to pick one value per
-- company, period and indicator: source precedence (company disclosure > tax bureau > stats
-- bureau > industry association) and unit precision (finer published unit first).
with

kpis as (

    select * from {{ ref('stg_enterprise__company_kpis') }}

),

metrics as (

    select * from {{ ref('stg_enterprise__metric_dictionary') }}

),

final as (

    select
        ---------- ids
        kpis.kpi_id,
        kpis.company_id,
        kpis.company_id || ':' || strftime(kpis.period, '%Y-%m-%d') || ':' || kpis.indicator
            as company_period_indicator_id,

        ---------- company attributes (copied upstream)
        kpis.region,
        kpis.province,
        kpis.industry_code,
        kpis.scale_category,

        ---------- period
        kpis.period,
        cast(year(kpis.period) as integer) as fiscal_year,
        cast(quarter(kpis.period) as integer) as fiscal_quarter,
        kpis.disclosure_date,
        date_diff('day', kpis.period, kpis.disclosure_date) as disclosure_lag_days,

        ---------- indicator
        kpis.indicator,
        metrics.indicator_name,
        metrics.category,
        metrics.value_kind,
        metrics.canonical_unit,

        ---------- source and unit
        kpis.source,
        case kpis.source
            when 'COMPANY_DISCLOSURE' then 1
            when 'TAX_BUREAU' then 2
            when 'STATS_BUREAU' then 3
            when 'INDUSTRY_ASSOC' then 4
        end as source_rank,
        kpis.unit,
        kpis.unit_reported,
        kpis.unit_multiplier,

        ---------- value
        kpis.value as value_reported,
        kpis.value_canonical,
        kpis.value_status,
        case kpis.value_status
            when 'OK' then 1
            when 'OUTLIER' then 2
            when 'UNIT_CONFLICT' then 3
            when 'MISSING' then 4
        end as value_status_rank,

        ---------- data quality
        kpis.is_company_id_drifted,
        kpis.is_unit_repaired

    from kpis
    left join metrics
        on kpis.indicator = metrics.indicator

)

select * from final
