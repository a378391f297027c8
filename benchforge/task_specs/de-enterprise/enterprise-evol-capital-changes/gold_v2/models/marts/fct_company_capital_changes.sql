with

changes as (

    select * from {{ ref('int_company_capital_changes') }}

),

companies as (

    select * from {{ ref('int_companies_enriched') }}

),

final as (

    select
        ---------- ids
        changes.change_id,
        changes.company_id,

        ---------- company attributes (current)
        companies.company_name,
        companies.region,
        companies.province,
        companies.industry_code,
        companies.scale_category,
        companies.is_listed,

        ---------- event
        changes.version_number,
        changes.changed_at,
        changes.change_date,
        cast(year(changes.change_date) as integer) as change_year,
        changes.change_type,
        changes.is_labelled_capital_change,
        changes.direction,

        ---------- capital
        changes.previous_capital_wan_cny,
        changes.new_capital_wan_cny,
        changes.capital_delta_wan_cny,
        changes.capital_delta_cny,
        changes.capital_change_pct

    from changes
    left join companies
        on changes.company_id = companies.company_id

)

select * from final
