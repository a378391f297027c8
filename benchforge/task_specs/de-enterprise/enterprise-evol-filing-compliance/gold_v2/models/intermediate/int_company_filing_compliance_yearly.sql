-- Filing compliance of each company per fiscal year (the year of the filings' fiscal period):
-- how many filings it made, how many were late and by how much, and the resulting rating.
-- A: no late filing; C: a filing more than 30 days late, or three or more late filings;
-- B: otherwise (one or two filings at most 30 days late).
with

filings as (

    select * from {{ ref('int_filings_enriched') }}

),

yearly as (

    select
        company_id,
        cast(year(fiscal_period) as integer) as fiscal_year,
        count(*) as filings,
        count(*) filter (where is_late_filing) as late_filings,
        count(*) filter (where is_late_filing and report_category = 'STATISTICS_QUARTERLY')
            as late_statistics_filings,
        count(*) filter (where is_late_filing and report_category = 'EXCHANGE_PERIODIC')
            as late_exchange_filings,
        max(days_late) as max_days_late,
        sum(days_late) as total_days_late

    from filings
    group by company_id, cast(year(fiscal_period) as integer)

),

final as (

    select
        ---------- ids
        company_id || ':' || cast(fiscal_year as varchar) as company_year_id,
        company_id,
        fiscal_year,

        ---------- filings
        filings,
        late_filings,
        late_statistics_filings,
        late_exchange_filings,
        cast(max_days_late as integer) as max_days_late,
        cast(total_days_late as integer) as total_days_late,
        round((filings - late_filings) / filings, 4) as on_time_rate,

        ---------- rating
        case
            when late_filings = 0 then 'A'
            when max_days_late > 30 or late_filings >= 3 then 'C'
            else 'B'
        end as compliance_rating

    from yearly

)

select * from final
