with

provinces as (

    select * from {{ ref('stg_enterprise__provinces') }}

),

companies as (

    select
        province,
        count(*) as companies,
        count(*) filter (where is_listed) as listed_companies,
        {{ sum_exact('registered_capital_cny') }} as registered_capital_cny

    from {{ ref('int_companies_enriched') }}
    group by province

),

policies as (

    select
        province,
        count(*) as policies,
        count(*) filter (where status = 'In force') as policies_in_force

    from {{ ref('stg_enterprise__policy_documents') }}
    where province is not null
    group by province

),

capital_increases as (

    select
        companies.province,
        count(*) as capital_increase_events,
        count(*) filter (
            where changes.change_date > cast('{{ var("as_of_date") }}' as date) - interval 2 year
        ) as recent_capital_increase_events,
        {{ sum_exact('changes.capital_delta_cny') }} as capital_increase_cny

    from {{ ref('int_company_capital_changes') }} as changes
    inner join {{ ref('int_companies_enriched') }} as companies
        on changes.company_id = companies.company_id
    where changes.direction = 'INCREASE'
    group by companies.province

),

final as (

    select
        ---------- ids
        provinces.province,
        provinces.admin_code,

        ---------- attributes
        provinces.province_cn,
        provinces.province_abbr,
        provinces.region,
        provinces.capital,
        provinces.utc_offset_hours,

        ---------- counts
        coalesce(companies.companies, 0) as companies,
        coalesce(companies.listed_companies, 0) as listed_companies,
        coalesce(companies.registered_capital_cny, 0) as registered_capital_cny,
        coalesce(policies.policies, 0) as provincial_policies,
        coalesce(policies.policies_in_force, 0) as provincial_policies_in_force,

        ---------- registered-capital increases of the province's companies
        coalesce(capital_increases.capital_increase_events, 0) as capital_increase_events,
        coalesce(capital_increases.recent_capital_increase_events, 0) as recent_capital_increase_events,
        coalesce(capital_increases.capital_increase_cny, 0) as capital_increase_cny

    from provinces
    left join companies
        on provinces.province = companies.province
    left join policies
        on provinces.province = policies.province
    left join capital_increases
        on provinces.province = capital_increases.province

)

select * from final
