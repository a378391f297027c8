with

industries as (

    select * from {{ ref('stg_enterprise__industries') }}

),

companies as (

    select
        industry_code,
        count(*) as companies,
        count(*) filter (where is_listed) as listed_companies,
        count(*) filter (where is_high_tech) as high_tech_companies

    from {{ ref('int_companies_enriched') }}
    group by industry_code

),

policies as (

    select
        industry_code,
        count(*) as related_policies,
        count(*) filter (where is_primary_industry) as primary_policies

    from {{ ref('int_policy_industries_exploded') }}
    group by industry_code

),

final as (

    select
        ---------- ids
        industries.industry_code,

        ---------- attributes
        industries.industry_name,
        industries.industry_name_cn,
        industries.sector,
        industries.industry_section,

        ---------- counts
        coalesce(companies.companies, 0) as companies,
        coalesce(companies.listed_companies, 0) as listed_companies,
        coalesce(companies.high_tech_companies, 0) as high_tech_companies,
        coalesce(policies.related_policies, 0) as related_policies,
        coalesce(policies.primary_policies, 0) as primary_policies

    from industries
    left join companies
        on industries.industry_code = companies.industry_code
    left join policies
        on industries.industry_code = policies.industry_code

)

select * from final
