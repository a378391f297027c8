-- Each filing with its company context and its timing: the Beijing filing date (filed_at is
-- UTC, China is UTC+8), days after the period end and days relative to the deadline.
with

filings as (

    select * from {{ ref('stg_enterprise__company_filings') }}

),

companies as (

    select * from {{ ref('int_companies_enriched') }}

),

timed as (

    select
        filings.*,
        cast(filings.filed_at + interval 8 hour as date) as filed_date_beijing

    from filings

),

final as (

    select
        ---------- ids
        timed.filing_id,
        timed.company_id,

        ---------- attributes
        timed.company_name,
        companies.region,
        timed.province,
        companies.industry_code,
        companies.scale_category,
        timed.listing_status,
        timed.exchange,
        timed.filing_type,
        month(timed.fiscal_period) = 12 as is_annual_filing,
        timed.title,
        timed.document_url,

        ---------- timing
        timed.fiscal_period,
        timed.deadline,
        timed.filed_at,
        timed.filed_date_beijing,
        date_diff('day', timed.fiscal_period, timed.filed_date_beijing) as days_after_period_end,
        date_diff('day', timed.deadline, timed.filed_date_beijing) as days_after_deadline,
        timed.is_late_filing,

        ---------- numerics
        timed.figures_disclosed,
        timed.page_count,

        ---------- data quality
        timed.is_filed_at_tz_repaired

    from timed
    left join companies
        on timed.company_id = companies.company_id

)

select * from final
