with

financials as (

    select * from {{ ref('int_company_financials_pivoted') }}

),

companies as (

    select * from {{ ref('int_companies_enriched') }}

),

final as (

    select
        ---------- ids
        financials.company_period_id,
        financials.company_id,

        ---------- company attributes
        companies.region,
        companies.province,
        companies.industry_code,
        companies.scale_category,
        companies.is_listed,

        ---------- period
        financials.period,
        cast(year(financials.period) as integer) as fiscal_year,
        cast(quarter(financials.period) as integer) as fiscal_quarter,
        financials.indicators_reported,
        financials.indicators_usable,
        financials.indicators_flagged_outlier,

        ---------- amounts (CNY)
        financials.revenue,
        financials.net_profit,
        financials.total_assets,
        financials.total_liabilities,
        financials.owners_equity,
        financials.rd_expense,
        financials.operating_cash_flow,
        financials.taxes_paid,
        financials.export_value,

        ---------- reported ratios (percent) and counts
        financials.gross_margin_pct,
        financials.roe_pct,
        financials.debt_ratio_pct,
        financials.revenue_growth_yoy_pct,
        financials.rd_intensity_pct,
        financials.patents_granted,

        ---------- derived ratios and identity checks
        financials.net_margin_pct,
        financials.tax_burden_pct,
        financials.export_share_pct,
        financials.debt_ratio_computed_pct,
        financials.rd_intensity_computed_pct,
        financials.roe_computed_pct,
        financials.balance_sheet_gap,
        round(financials.balance_sheet_gap / nullif(abs(financials.total_assets), 0) * 100, 4)
            as balance_sheet_gap_pct

    from financials
    left join companies
        on financials.company_id = companies.company_id

)

select * from final
