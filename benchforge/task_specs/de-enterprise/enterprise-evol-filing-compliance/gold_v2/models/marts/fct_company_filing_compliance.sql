with

compliance as (

    select * from {{ ref('int_company_filing_compliance_yearly') }}

),

companies as (

    select * from {{ ref('int_companies_enriched') }}

),

with_previous as (

    select
        compliance.*,
        lag(compliance.compliance_rating) over (
            partition by compliance.company_id order by compliance.fiscal_year
        ) as previous_rating,
        lag(compliance.fiscal_year) over (
            partition by compliance.company_id order by compliance.fiscal_year
        ) as previous_rated_year

    from compliance

),

final as (

    select
        ---------- ids
        with_previous.company_year_id,
        with_previous.company_id,

        ---------- company attributes
        companies.company_name,
        companies.region,
        companies.province,
        companies.industry_code,
        companies.scale_category,
        companies.is_listed,

        ---------- year
        with_previous.fiscal_year,

        ---------- filings
        with_previous.filings,
        with_previous.late_filings,
        with_previous.late_statistics_filings,
        with_previous.late_exchange_filings,
        with_previous.max_days_late,
        with_previous.total_days_late,
        with_previous.on_time_rate,

        ---------- rating
        with_previous.compliance_rating,
        case
            when with_previous.previous_rated_year = with_previous.fiscal_year - 1
                then with_previous.previous_rating
        end as previous_year_rating,
        coalesce(
            with_previous.previous_rated_year = with_previous.fiscal_year - 1
            and with_previous.compliance_rating > with_previous.previous_rating,
            false
        ) as is_downgraded

    from with_previous
    left join companies
        on with_previous.company_id = companies.company_id

)

select * from final
