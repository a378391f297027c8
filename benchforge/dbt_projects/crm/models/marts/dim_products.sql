with

products as (

    select * from {{ ref('stg_crm__products') }}

),

price_book_stats as (

    select product_id, count(*) as price_book_entry_count
    from {{ ref('stg_crm__price_book_entries') }}
    group by product_id

),

opportunity_line_stats as (

    select
        product_id,
        count(*) as opportunity_line_count,
        count(*) filter (where is_opportunity_won) as won_line_count,
        coalesce(sum(total_price_usd) filter (where is_opportunity_won), 0) as won_revenue_usd,
        coalesce(sum(gross_margin_usd) filter (where is_opportunity_won), 0) as won_gross_margin_usd

    from {{ ref('int_opportunity_line_items_priced') }}
    group by product_id

),

order_line_stats as (

    select
        order_items.product_id,
        count(*) as order_line_count,
        coalesce(
            sum({{ to_usd('order_items.total_price', 'order_items.conversion_rate') }})
                filter (where orders.status <> 'Cancelled'),
            0
        ) as ordered_revenue_usd

    from {{ ref('stg_crm__order_items') }} as order_items
    left join {{ ref('stg_crm__orders') }} as orders
        on orders.order_id = order_items.order_id
    where order_items.product_id is not null
    group by order_items.product_id

),

case_stats as (

    select product_id, count(*) as case_count
    from {{ ref('stg_crm__cases') }}
    where product_id is not null
    group by product_id

),

final as (

    select
        ---------- ids
        products.product_id,
        products.product_code,

        ---------- text
        products.product_name,
        products.family,
        products.edition,
        products.billing_frequency,
        products.unit_of_measure,

        ---------- numerics
        products.list_price_usd,
        products.unit_cost_usd,
        products.list_price_usd - products.unit_cost_usd as unit_margin_usd,
        coalesce(price_book_stats.price_book_entry_count, 0) as price_book_entry_count,
        coalesce(opportunity_line_stats.opportunity_line_count, 0) as opportunity_line_count,
        coalesce(opportunity_line_stats.won_line_count, 0) as won_line_count,
        coalesce(opportunity_line_stats.won_revenue_usd, 0) as won_revenue_usd,
        coalesce(opportunity_line_stats.won_gross_margin_usd, 0) as won_gross_margin_usd,
        coalesce(order_line_stats.order_line_count, 0) as order_line_count,
        coalesce(order_line_stats.ordered_revenue_usd, 0) as ordered_revenue_usd,
        coalesce(case_stats.case_count, 0) as case_count,

        ---------- booleans
        products.is_active,
        products.family in ('Professional Services', 'Training') as is_service,

        ---------- dates
        products.created_at

    from products
    left join price_book_stats
        on price_book_stats.product_id = products.product_id
    left join opportunity_line_stats
        on opportunity_line_stats.product_id = products.product_id
    left join order_line_stats
        on order_line_stats.product_id = products.product_id
    left join case_stats
        on case_stats.product_id = products.product_id

)

select * from final
