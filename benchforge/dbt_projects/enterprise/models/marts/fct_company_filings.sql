with

filings as (

    select * from {{ ref('int_filings_enriched') }}

),

final as (

    select
        ---------- ids
        filing_id,
        company_id,

        ---------- attributes
        company_name,
        region,
        province,
        industry_code,
        scale_category,
        listing_status,
        exchange,
        filing_type,
        is_annual_filing,
        title,
        document_url,

        ---------- timing
        fiscal_period,
        cast(year(fiscal_period) as integer) as fiscal_year,
        cast(quarter(fiscal_period) as integer) as fiscal_quarter,
        deadline,
        filed_at,
        filed_date_beijing,
        days_after_period_end,
        days_after_deadline,
        greatest(days_after_deadline, 0) as days_late,
        is_late_filing,

        ---------- numerics
        figures_disclosed,
        page_count,

        ---------- data quality
        is_filed_at_tz_repaired

    from filings

)

select * from final
