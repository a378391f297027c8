with

metrics as (

    select * from {{ ref('stg_enterprise__metric_dictionary') }}

),

rows_reported as (

    select
        indicator,
        count(*) as reported_rows,
        count(distinct unit_reported) as units_reported,
        count(*) filter (where unit_multiplier = 1.0) as rows_in_canonical_unit,
        count(*) filter (where value_status = 'MISSING') as missing_rows,
        count(*) filter (where value_status = 'OUTLIER') as outlier_rows,
        count(*) filter (where value_status = 'UNIT_CONFLICT') as unit_conflict_rows,
        count(*) filter (where is_unit_repaired) as unit_repaired_rows

    from {{ ref('int_company_kpis_normalised') }}
    group by indicator

),

cells as (

    select
        indicator,
        count(*) as company_period_cells,
        count(distinct company_id) as companies_reporting,
        count(*) filter (where sources_reporting > 1) as cells_with_several_sources

    from {{ ref('int_company_kpis_deduplicated') }}
    group by indicator

),

final as (

    select
        ---------- ids
        metrics.indicator,

        ---------- definition
        metrics.indicator_name,
        metrics.indicator_name_cn,
        metrics.definition,
        metrics.canonical_unit,
        metrics.category,
        metrics.value_kind,
        metrics.value_kind = 'amount' as is_aggregated_upstream,

        ---------- coverage
        coalesce(rows_reported.reported_rows, 0) as reported_rows,
        coalesce(rows_reported.units_reported, 0) as units_reported,
        coalesce(rows_reported.rows_in_canonical_unit, 0) as rows_in_canonical_unit,
        coalesce(cells.company_period_cells, 0) as company_period_cells,
        coalesce(cells.companies_reporting, 0) as companies_reporting,
        coalesce(cells.cells_with_several_sources, 0) as cells_with_several_sources,

        ---------- data quality
        coalesce(rows_reported.missing_rows, 0) as missing_rows,
        coalesce(rows_reported.outlier_rows, 0) as outlier_rows,
        coalesce(rows_reported.unit_conflict_rows, 0) as unit_conflict_rows,
        coalesce(rows_reported.unit_repaired_rows, 0) as unit_repaired_rows

    from metrics
    left join rows_reported
        on metrics.indicator = rows_reported.indicator
    left join cells
        on metrics.indicator = cells.indicator

)

select * from final
