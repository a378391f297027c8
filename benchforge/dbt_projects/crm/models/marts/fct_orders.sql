with

orders as (

    select * from {{ ref('int_orders_summarized') }}

)

select * from orders
