with

quotes as (

    select * from {{ ref('int_quotes_totaled') }}

)

select * from quotes
