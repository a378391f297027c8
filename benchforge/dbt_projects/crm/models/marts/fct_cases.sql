with

cases as (

    select * from {{ ref('int_cases_sla_evaluated') }}

)

select * from cases
