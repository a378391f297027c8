-- One row per policy document with its UTC publication time (Beijing-time values repaired),
-- validity as of the as_of_date variable, its industries and the number of companies in its
-- scope (companies of a related industry, in the issuing province for provincial documents).
with

policies as (

    select * from {{ ref('stg_enterprise__policy_documents') }}

),

policy_industries as (

    select * from {{ ref('int_policy_industries_exploded') }}

),

companies as (

    select * from {{ ref('int_companies_enriched') }}

),

industries as (

    select * from {{ ref('stg_enterprise__industries') }}

),

industry_counts as (

    select
        policy_id,
        count(*) as related_industry_count

    from policy_industries
    group by policy_id

),

companies_in_scope as (

    select
        policy_industries.policy_id,
        count(distinct companies.company_id) as companies_in_scope,
        count(distinct companies.company_id) filter (where companies.is_high_tech) as high_tech_companies_in_scope,
        count(distinct companies.company_id) filter (where companies.is_listed) as listed_companies_in_scope

    from policy_industries
    inner join policies
        on policy_industries.policy_id = policies.policy_id
    inner join companies
        on policy_industries.industry_code = companies.industry_code
        and (policies.province is null or policies.province = companies.province)
    group by policy_industries.policy_id

),

final as (

    select
        ---------- ids
        policies.policy_id,
        policies.doc_number,

        ---------- attributes
        policies.level,
        policies.province,
        policies.province_cn,
        policies.issuing_body,
        policies.policy_type,
        policies.is_support_measure,
        policies.industry_code,
        industries.industry_name,
        policies.industry_name_cn,
        policies.related_industries,
        coalesce(industry_counts.related_industry_count, 0) as related_industry_count,
        policies.title_cn,
        policies.summary_en,
        policies.status,
        policies.source_url,

        ---------- dates
        policies.published_at,
        policies.publish_date,
        policies.effective_date,
        policies.expiry_date,
        date_diff('day', policies.publish_date, policies.effective_date) as days_to_effect,
        date_diff('day', policies.effective_date, policies.expiry_date) as term_days,
        policies.is_in_force_as_of,

        ---------- text
        policies.char_count,
        policies.body_text is not null as has_body_text,

        ---------- scope
        coalesce(companies_in_scope.companies_in_scope, 0) as companies_in_scope,
        coalesce(companies_in_scope.high_tech_companies_in_scope, 0) as high_tech_companies_in_scope,
        coalesce(companies_in_scope.listed_companies_in_scope, 0) as listed_companies_in_scope,

        ---------- data quality
        policies.is_published_at_tz_repaired,
        policies.is_body_text_missing

    from policies
    left join industry_counts
        on policies.policy_id = industry_counts.policy_id
    left join companies_in_scope
        on policies.policy_id = companies_in_scope.policy_id
    left join industries
        on policies.industry_code = industries.industry_code

)

select * from final
