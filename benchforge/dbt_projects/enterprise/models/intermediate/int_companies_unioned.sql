-- The four regional profile tables (already cleaned to one schema in staging) stacked into one
-- national list of companies, tagged with the regional table each row came from.
with

east as (

    select 'company_profiles_east' as source_table, * from {{ ref('stg_enterprise__company_profiles_east') }}

),

central as (

    select 'company_profiles_central' as source_table, * from {{ ref('stg_enterprise__company_profiles_central') }}

),

west as (

    select 'company_profiles_west' as source_table, * from {{ ref('stg_enterprise__company_profiles_west') }}

),

northeast as (

    select 'company_profiles_northeast' as source_table, * from {{ ref('stg_enterprise__company_profiles_northeast') }}

),

unioned as (

    select * from east
    union all by name
    select * from central
    union all by name
    select * from west
    union all by name
    select * from northeast

)

select * from unioned
