with

leads as (

    select * from {{ ref('int_leads_converted') }}

)

select * from leads
