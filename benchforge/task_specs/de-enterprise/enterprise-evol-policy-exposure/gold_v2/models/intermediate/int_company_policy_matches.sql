-- Policies in force that apply to each company: one row per company and policy document in
-- force as of the as_of_date variable whose related industries include the company's industry,
-- national documents for every province and provincial documents only in their province.
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

final as (

    select
        ---------- ids
        companies.company_id || ':' || policies.policy_id as company_policy_id,
        companies.company_id,
        policies.policy_id,

        ---------- company
        companies.province,
        companies.industry_code,

        ---------- policy
        policies.level,
        policies.policy_type,
        policies.is_support_measure,
        policy_industries.industry_position,
        policy_industries.is_primary_industry,
        policies.effective_date,
        policies.expiry_date

    from policies
    inner join policy_industries
        on policies.policy_id = policy_industries.policy_id
    inner join companies
        on policy_industries.industry_code = companies.industry_code
        and (policies.province is null or policies.province = companies.province)
    where policies.is_in_force_as_of

)

select * from final
