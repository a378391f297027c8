-- One row per company of the unioned regional profiles, integrated with the national company
-- index (which fills the industry codes and legal representatives left blank in the regional
-- tables), the province and industry references and the current registration from the history.
with

companies as (

    select * from {{ ref('int_companies_unioned') }}

),

company_index as (

    select * from {{ ref('stg_enterprise__company_index') }}

),

provinces as (

    select * from {{ ref('stg_enterprise__provinces') }}

),

industries as (

    select * from {{ ref('stg_enterprise__industries') }}

),

registrations as (

    select * from {{ ref('int_company_registrations_current_state') }}

),

filled as (

    select
        companies.*,
        coalesce(companies.industry_code, company_index.industry_code) as industry_code_filled,
        coalesce(companies.legal_representative, company_index.legal_representative)
            as legal_representative_filled,
        company_index.company_id is not null as is_in_company_index,
        company_index.registered_capital_wan_cny as index_registered_capital_wan_cny

    from companies
    left join company_index
        on companies.company_id = company_index.company_id

),

final as (

    select
        ---------- ids
        filled.company_id,
        filled.credit_code,
        filled.stock_code,
        registrations.current_change_id,

        ---------- identity
        filled.company_name,
        filled.source_table,
        filled.region,
        filled.province,
        filled.province_cn,
        provinces.province_abbr,
        filled.admin_code,
        filled.industry_code_filled as industry_code,
        industries.industry_name,
        industries.industry_name_cn,
        industries.sector,
        filled.ownership_type,
        filled.legal_representative_filled as legal_representative,

        ---------- size and listing
        filled.employees,
        filled.scale_category,
        filled.listing_status,
        filled.listing_status <> 'Unlisted' as is_listed,
        filled.is_high_tech,
        filled.registered_capital_wan_cny,
        round(filled.registered_capital_wan_cny * 1e4, 2) as registered_capital_cny,

        ---------- dates
        filled.established_date,
        date_diff('year', filled.established_date, cast('{{ var("as_of_date") }}' as date)) as company_age_years,

        ---------- registration history
        registrations.registration_versions,
        registrations.last_changed_at as registration_last_changed_at,
        registrations.name_changes,
        registrations.capital_changes,
        registrations.representative_changes,
        registrations.listing_changes,
        registrations.repaired_duplicate_current_count,
        coalesce(
            registrations.registered_name = filled.company_name
            and registrations.registered_capital_wan_cny = filled.registered_capital_wan_cny
            and registrations.registered_listing_status = filled.listing_status
            and registrations.registered_legal_representative is not distinct from filled.legal_representative_filled,
            false
        ) as is_registration_consistent,

        ---------- data quality
        filled.is_in_company_index,
        filled.index_registered_capital_wan_cny = filled.registered_capital_wan_cny as is_capital_consistent_with_index,
        filled.is_registered_capital_text_formatted,
        filled.is_employees_outlier,
        filled.is_industry_code_missing as is_industry_code_filled_from_index,
        filled.is_legal_representative_missing as is_legal_representative_filled_from_index,
        filled.employees_reported

    from filled
    left join provinces
        on filled.province = provinces.province
    left join industries
        on filled.industry_code_filled = industries.industry_code
    left join registrations
        on filled.company_id = registrations.company_id

)

select * from final
