with

line_items as (

    select * from {{ ref('int_opportunity_line_items_priced') }}

)

select * from line_items
