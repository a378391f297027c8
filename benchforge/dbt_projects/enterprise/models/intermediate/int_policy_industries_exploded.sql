-- The `;`-separated related_industries of each policy document exploded into one row per
-- policy and industry code, keeping the position (the first code is the primary industry).
with

policies as (

    select * from {{ ref('stg_enterprise__policy_documents') }}

),

exploded as (

    select
        policy_id,
        industry_code as primary_industry_code,
        unnest(string_split(related_industries, ';')) as industry_code,
        unnest(range(1, len(string_split(related_industries, ';')) + 1)) as industry_position

    from policies
    where related_industries is not null and related_industries <> ''

),

final as (

    select
        policy_id || ':' || industry_code as policy_industry_id,
        policy_id,
        industry_code,
        cast(industry_position as integer) as industry_position,
        industry_position = 1 as is_primary_industry,
        industry_code = primary_industry_code as matches_primary_industry

    from exploded

)

select * from final
