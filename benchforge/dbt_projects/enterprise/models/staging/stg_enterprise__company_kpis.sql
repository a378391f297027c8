-- One reported figure per row, in the unit the source used. Stressors handled:
--   * key drift on company_id (`e-0001234`, trailing space): upper(trim()).
--   * replaced unit labels: each source publishes amounts in known units (company disclosure:
--     CNY / ten thousand CNY; stats bureau: thousand / ten thousand CNY; tax bureau: CNY / ten
--     thousand CNY; industry association: million / hundred million CNY), percent indicators in
--     percent (ratio for the industry association) and patents in items. A money label on a
--     percent or count row is plainly wrong and is repaired to the expected unit; an amount
--     labelled with a unit its source never uses cannot be resolved exactly: its canonical
--     value is left NULL and the row flagged UNIT_CONFLICT.
--   * values are normalised to the canonical unit of the metric dictionary (CNY, percent, items).
--   * x10000 outliers (yuan / wan-yuan mix-ups): a canonical value more than 1000 times the
--     median absolute value of the indicator for companies of the same size class (or a
--     percentage beyond +-1000%) is flagged OUTLIER. A relabelled unit that stays within the
--     source's units (CNY <-> ten thousand CNY) produces the same x10^4 error and is caught by
--     the same rule.
--   * blank values stay NULL (MISSING).
with

source as (

    select * from {{ source('enterprise', 'company_kpis') }}

),

metrics as (

    select * from {{ ref('stg_enterprise__metric_dictionary') }}

),

expected_units as (

    select
        source.*,
        metrics.value_kind,
        metrics.canonical_unit,
        case
            when metrics.value_kind = 'percent' and source.source = 'INDUSTRY_ASSOC' then 'ratio'
            when metrics.value_kind = 'percent' then 'percent'
            when metrics.value_kind = 'count' then 'items'
        end as expected_unit,
        case source.source
            when 'COMPANY_DISCLOSURE' then ['CNY', 'ten thousand CNY']
            when 'STATS_BUREAU' then ['thousand CNY', 'ten thousand CNY']
            when 'TAX_BUREAU' then ['CNY', 'ten thousand CNY']
            when 'INDUSTRY_ASSOC' then ['million CNY', 'hundred million CNY']
        end as source_amount_units

    from source
    left join metrics
        on upper(trim(source.indicator)) = metrics.indicator

),

units_resolved as (

    select
        *,
        coalesce(expected_unit, unit) as unit_resolved,
        coalesce(expected_unit is not null and unit is distinct from expected_unit, false)
            as is_unit_repaired,
        coalesce(value_kind = 'amount' and not list_contains(source_amount_units, unit), false)
            as has_unit_conflict

    from expected_units

),

normalised as (

    select
        *,
        case unit_resolved
            when 'CNY' then 1.0
            when 'thousand CNY' then 1e3
            when 'ten thousand CNY' then 1e4
            when 'million CNY' then 1e6
            when 'hundred million CNY' then 1e8
            when 'ratio' then 100.0
            when 'percent' then 1.0
            when 'items' then 1.0
        end as unit_multiplier

    from units_resolved

),

canonical as (

    select
        *,
        case
            when has_unit_conflict then null
            else round(value * unit_multiplier, 2)
        end as value_canonical

    from normalised

),

size_class_medians as (

    select
        upper(trim(indicator)) as indicator,
        scale_category,
        median(abs(value_canonical)) as median_abs_value

    from canonical
    where value_canonical <> 0
    group by upper(trim(indicator)), scale_category

),

flagged as (

    select
        canonical.*,
        size_class_medians.median_abs_value,
        coalesce(
            abs(canonical.value_canonical) > 1000 * size_class_medians.median_abs_value
            or (canonical.value_kind = 'percent' and abs(canonical.value_canonical) > 1000),
            false
        ) as is_value_outlier

    from canonical
    left join size_class_medians
        on upper(trim(canonical.indicator)) = size_class_medians.indicator
        and canonical.scale_category = size_class_medians.scale_category

),

renamed as (

    select
        ---------- ids
        kpi_id,
        upper(trim(company_id)) as company_id,

        ---------- attributes (copied from the company upstream)
        region,
        trim(province) as province,
        upper(trim(industry_code)) as industry_code,
        scale_category,

        ---------- the figure
        cast(disclosure_date as date) as disclosure_date,
        cast(period as date) as period,
        upper(trim(indicator)) as indicator,
        indicator_name_cn,
        source,
        unit_resolved as unit,
        unit as unit_reported,
        canonical_unit,
        unit_multiplier,
        value,
        value_canonical,
        case
            when value is null then 'MISSING'
            when has_unit_conflict then 'UNIT_CONFLICT'
            when is_value_outlier then 'OUTLIER'
            else 'OK'
        end as value_status,

        ---------- data quality flags
        company_id <> upper(trim(company_id)) as is_company_id_drifted,
        is_unit_repaired,
        has_unit_conflict,
        value is null as is_value_missing,
        is_value_outlier

    from flagged

)

select * from renamed
