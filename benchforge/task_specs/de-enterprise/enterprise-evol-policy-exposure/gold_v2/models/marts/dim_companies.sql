with

companies as (

    select * from {{ ref('int_companies_enriched') }}

),

kpi_coverage as (

    select
        company_id,
        count(*) as kpi_cells,
        count(*) filter (where value_status = 'OK') as usable_kpi_cells,
        count(distinct period) as periods_reported,
        min(period) as first_period,
        max(period) as last_period

    from {{ ref('int_company_kpis_deduplicated') }}
    group by company_id

),

filings as (

    select
        company_id,
        count(*) as filings,
        count(*) filter (where is_late_filing) as late_filings

    from {{ ref('int_filings_enriched') }}
    group by company_id

),

policies_in_force as (

    select
        company_id,
        count(*) as policies_in_force,
        count(*) filter (where is_support_measure) as support_measures_in_force,
        count(*) filter (where level = 'National') as national_policies_in_force,
        count(*) filter (where level = 'Provincial') as provincial_policies_in_force

    from {{ ref('int_company_policy_matches') }}
    group by company_id

),

latest_revenue as (

    select
        company_id,
        arg_max(revenue, period) as latest_revenue_cny,
        max(period) as latest_revenue_period

    from {{ ref('int_company_financials_pivoted') }}
    where revenue is not null
    group by company_id

),

final as (

    select
        ---------- ids
        companies.company_id,
        companies.credit_code,
        companies.stock_code,

        ---------- identity
        companies.company_name,
        companies.region,
        companies.province,
        companies.province_cn,
        companies.province_abbr,
        companies.admin_code,
        companies.industry_code,
        companies.industry_name,
        companies.industry_name_cn,
        companies.sector,
        companies.ownership_type,
        companies.legal_representative,

        ---------- size and listing
        companies.employees,
        companies.scale_category,
        companies.listing_status,
        companies.is_listed,
        companies.is_high_tech,
        companies.registered_capital_wan_cny,
        companies.registered_capital_cny,

        ---------- dates and registration history
        companies.established_date,
        companies.company_age_years,
        companies.registration_versions,
        companies.registration_last_changed_at,
        companies.name_changes,
        companies.capital_changes,

        ---------- reporting
        coalesce(kpi_coverage.kpi_cells, 0) as kpi_cells,
        coalesce(kpi_coverage.usable_kpi_cells, 0) as usable_kpi_cells,
        coalesce(kpi_coverage.periods_reported, 0) as periods_reported,
        kpi_coverage.first_period,
        kpi_coverage.last_period,
        latest_revenue.latest_revenue_cny,
        latest_revenue.latest_revenue_period,
        coalesce(filings.filings, 0) as filings,
        coalesce(filings.late_filings, 0) as late_filings,

        ---------- policies in force that apply to the company
        coalesce(policies_in_force.policies_in_force, 0) as policies_in_force,
        coalesce(policies_in_force.support_measures_in_force, 0) as support_measures_in_force,
        coalesce(policies_in_force.national_policies_in_force, 0) as national_policies_in_force,
        coalesce(policies_in_force.provincial_policies_in_force, 0) as provincial_policies_in_force,

        ---------- data quality
        companies.source_table,
        companies.is_registered_capital_text_formatted,
        companies.is_employees_outlier,
        companies.is_industry_code_filled_from_index,
        companies.is_legal_representative_filled_from_index,
        companies.repaired_duplicate_current_count

    from companies
    left join kpi_coverage
        on companies.company_id = kpi_coverage.company_id
    left join filings
        on companies.company_id = filings.company_id
    left join latest_revenue
        on companies.company_id = latest_revenue.company_id
    left join policies_in_force
        on companies.company_id = policies_in_force.company_id

)

select * from final
