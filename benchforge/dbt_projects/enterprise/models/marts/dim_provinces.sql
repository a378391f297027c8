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
        coalesce(policies.policies_in_force, 0) as provincial_policies_in_force

    from provinces
    left join companies
        on provinces.province = companies.province
    left join policies
        on provinces.province = policies.province

)

select * from final
