-- One value per company, period and indicator. The chosen row is the best usable one: status
-- OK before OUTLIER / UNIT_CONFLICT / MISSING, then source precedence, then the finer unit,
-- then the lowest kpi_id. The value is only carried when the chosen row is OK; an outlier's
-- value is kept apart in flagged_value_canonical.
with

kpis as (

    select * from {{ ref('int_company_kpis_normalised') }}

),

ranked as (

    select
        *,
        row_number() over (
            partition by company_period_indicator_id
            order by value_status_rank, source_rank, unit_multiplier, kpi_id
        ) as preference

    from kpis

),

cell_summary as (

    select
        company_period_indicator_id,
        count(*) as reported_rows,
        count(*) filter (where value_status = 'OK') as usable_rows,
        count(distinct source) as sources_reporting,
        string_agg(distinct source, ';' order by source) as sources,
        min(value_canonical) filter (where value_status = 'OK') as min_usable_value,
        max(value_canonical) filter (where value_status = 'OK') as max_usable_value

    from kpis
    group by company_period_indicator_id

),

chosen as (

    select * from ranked where preference = 1

),

final as (

    select
        ---------- ids
        chosen.company_period_indicator_id,
        chosen.company_id,
        chosen.kpi_id as chosen_kpi_id,

        ---------- company attributes
        chosen.region,
        chosen.province,
        chosen.industry_code,
        chosen.scale_category,

        ---------- period and indicator
        chosen.period,
        chosen.fiscal_year,
        chosen.fiscal_quarter,
        chosen.indicator,
        chosen.value_kind,
        chosen.canonical_unit,

        ---------- chosen value
        chosen.source as chosen_source,
        chosen.unit as chosen_unit,
        chosen.value_status,
        case when chosen.value_status = 'OK' then chosen.value_canonical end as value_canonical,
        case when chosen.value_status = 'OUTLIER' then chosen.value_canonical end as flagged_value_canonical,

        ---------- agreement between rows
        cell_summary.reported_rows,
        cell_summary.usable_rows,
        cell_summary.sources_reporting,
        cell_summary.sources,
        round(cell_summary.max_usable_value - cell_summary.min_usable_value, 2) as usable_value_spread

    from chosen
    left join cell_summary
        on chosen.company_period_indicator_id = cell_summary.company_period_indicator_id

)

select * from final
