-- One row per company and period with any reported KPI: the usable (status OK) canonical
-- values pivoted to one column per indicator, so that the accounting identities between
-- indicators can be checked and derived ratios computed.
with

kpis as (

    select * from {{ ref('int_company_kpis_deduplicated') }}

),

pivoted as (

    select
        company_id || ':' || strftime(period, '%Y-%m-%d') as company_period_id,
        company_id,
        period,
        count(*) as indicators_reported,
        count(*) filter (where value_status = 'OK') as indicators_usable,
        max(value_canonical) filter (where indicator = 'REVENUE' and value_status = 'OK') as revenue,
        max(value_canonical) filter (where indicator = 'NET_PROFIT' and value_status = 'OK') as net_profit,
        max(value_canonical) filter (where indicator = 'TOTAL_ASSETS' and value_status = 'OK') as total_assets,
        max(value_canonical) filter (where indicator = 'TOTAL_LIABILITIES' and value_status = 'OK')
            as total_liabilities,
        max(value_canonical) filter (where indicator = 'OWNERS_EQUITY' and value_status = 'OK') as owners_equity,
        max(value_canonical) filter (where indicator = 'RD_EXPENSE' and value_status = 'OK') as rd_expense,
        max(value_canonical) filter (where indicator = 'OPERATING_CASH_FLOW' and value_status = 'OK')
            as operating_cash_flow,
        max(value_canonical) filter (where indicator = 'TAXES_PAID' and value_status = 'OK') as taxes_paid,
        max(value_canonical) filter (where indicator = 'EXPORT_VALUE' and value_status = 'OK') as export_value,
        max(value_canonical) filter (where indicator = 'GROSS_MARGIN' and value_status = 'OK') as gross_margin_pct,
        max(value_canonical) filter (where indicator = 'ROE' and value_status = 'OK') as roe_pct,
        max(value_canonical) filter (where indicator = 'DEBT_RATIO' and value_status = 'OK') as debt_ratio_pct,
        max(value_canonical) filter (where indicator = 'REVENUE_GROWTH_YOY' and value_status = 'OK')
            as revenue_growth_yoy_pct,
        max(value_canonical) filter (where indicator = 'RD_INTENSITY' and value_status = 'OK') as rd_intensity_pct,
        max(value_canonical) filter (where indicator = 'PATENTS_GRANTED' and value_status = 'OK') as patents_granted,
        count(*) filter (where value_status = 'OUTLIER') as indicators_flagged_outlier

    from kpis
    group by company_id, period

),

final as (

    select
        pivoted.*,
        round(total_assets - total_liabilities - owners_equity, 2) as balance_sheet_gap,
        round(total_liabilities / nullif(total_assets, 0) * 100, 2) as debt_ratio_computed_pct,
        round(rd_expense / nullif(revenue, 0) * 100, 2) as rd_intensity_computed_pct,
        round(net_profit / nullif(revenue, 0) * 100, 2) as net_margin_pct,
        round(net_profit * 4 / nullif(owners_equity, 0) * 100, 2) as roe_computed_pct,
        round(taxes_paid / nullif(revenue, 0) * 100, 2) as tax_burden_pct,
        round(export_value / nullif(revenue, 0) * 100, 2) as export_share_pct

    from pivoted

)

select * from final
