with

order_items as (

    select * from {{ ref('stg_crm__order_items') }}

),

orders as (

    select order_id, contract_id, account_id, currency, status, effective_date
    from {{ ref('stg_crm__orders') }}

),

products as (

    select product_id, product_name, family from {{ ref('stg_crm__products') }}

),

final as (

    select
        ---------- ids
        order_items.order_item_id,
        order_items.order_id,
        orders.contract_id,
        orders.account_id,
        order_items.product_id,

        ---------- text
        products.product_name,
        products.family as product_family,
        order_items.currency,
        orders.currency as order_currency,
        orders.status as order_status,

        ---------- numerics
        order_items.conversion_rate,
        order_items.quantity,
        order_items.discount_pct,
        order_items.standard_price_usd,
        order_items.unit_price,
        order_items.total_price,
        {{ to_usd('order_items.total_price', 'order_items.conversion_rate') }} as total_price_usd,
        date_diff('day', orders.effective_date, order_items.service_date) as days_to_service,

        ---------- booleans
        order_items.is_quantity_outlier,
        order_items.is_product_missing,
        order_items.is_order_id_drifted,

        ---------- dates
        orders.effective_date as order_effective_date,
        order_items.service_date

    from order_items
    left join orders
        on orders.order_id = order_items.order_id
    left join products
        on products.product_id = order_items.product_id

)

select * from final
