-- Period-over-period change of each usable company KPI value: against the previous quarter
-- end (QoQ) and the same quarter a year earlier (YoY). Joined on the exact period, so a gap in
-- reporting gives NULL rather than comparing with an older quarter. Amounts and counts get a
-- growth rate in percent of the absolute earlier value (so a smaller loss is growth); percent indicators get a change in percentage points.
with

kpis as (

    select * from {{ ref('int_company_kpis_deduplicated') }}

),

usable as (

    select
        company_id,
        period,
        indicator,
        value_canonical

    from kpis
    where value_status = 'OK'

),

with_previous as (

    select
        kpis.company_period_indicator_id,
        kpis.company_id,
        kpis.period,
        kpis.indicator,
        kpis.value_kind,
        kpis.value_canonical,
        previous_quarter.value_canonical as previous_quarter_value,
        previous_year.value_canonical as previous_year_value

    from kpis
    left join usable as previous_quarter
        on kpis.company_id = previous_quarter.company_id
        and kpis.indicator = previous_quarter.indicator
        and previous_quarter.period = last_day(kpis.period - interval 3 month)
    left join usable as previous_year
        on kpis.company_id = previous_year.company_id
        and kpis.indicator = previous_year.indicator
        and previous_year.period = last_day(kpis.period - interval 1 year)
    where kpis.value_status = 'OK'

),

final as (

    select
        *,
        round(value_canonical - previous_quarter_value, 2) as qoq_change,
        round(value_canonical - previous_year_value, 2) as yoy_change,
        case
            when value_kind <> 'percent'
                then round((value_canonical - previous_quarter_value) / nullif(abs(previous_quarter_value), 0) * 100, 2)
        end as qoq_growth_pct,
        case
            when value_kind <> 'percent'
                then round((value_canonical - previous_year_value) / nullif(abs(previous_year_value), 0) * 100, 2)
        end as yoy_growth_pct

    from with_previous

)

select * from final
