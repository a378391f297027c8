{#-
    Order fulfilment: each order with its lines, its contract and USD totals.
    - items_subtotal = sum of line total_price (clean even where the quantity is an outlier);
      order_total = items_subtotal + shipping_amount; USD = / conversion_rate.
    - days_to_first_service = first line service_date - effective_date.
    - is_within_contract_term: effective_date between the contract's start and end dates.
    - fulfilment_status: Cancelled, Fulfilled, or Pending (Draft / Activated).
-#}
with

orders as (

    select * from {{ ref('stg_crm__orders') }}

),

contracts as (

    select * from {{ ref('stg_crm__contracts') }}

),

order_lines as (

    select
        order_id,
        count(*) as line_item_count,
        sum(total_price) as items_subtotal,
        count(*) filter (where is_quantity_outlier) as quantity_outlier_count,
        count(*) filter (where is_product_missing) as line_without_product_count,
        min(currency) as line_currency,
        min(service_date) as first_service_date

    from {{ ref('stg_crm__order_items') }}
    group by order_id

),

summarized as (

    select
        ---------- ids
        orders.order_id,
        orders.order_number,
        orders.contract_id,
        orders.account_id,
        orders.owner_id,

        ---------- text
        orders.order_type,
        orders.status,
        case
            when orders.status = 'Cancelled' then 'Cancelled'
            when orders.status = 'Fulfilled' then 'Fulfilled'
            else 'Pending'
        end as fulfilment_status,
        orders.currency,
        orders.currency_raw,
        order_lines.line_currency,
        orders.payment_terms,
        orders.shipping_method,

        ---------- numerics
        orders.conversion_rate,
        coalesce(order_lines.line_item_count, 0) as line_item_count,
        coalesce(order_lines.items_subtotal, 0) as items_subtotal,
        orders.shipping_amount,
        coalesce(order_lines.items_subtotal, 0) + orders.shipping_amount as order_total,
        {{ to_usd('coalesce(order_lines.items_subtotal, 0)', 'orders.conversion_rate') }}
            as items_subtotal_usd,
        {{ to_usd('coalesce(order_lines.items_subtotal, 0) + orders.shipping_amount', 'orders.conversion_rate') }}
            as order_total_usd,
        coalesce(order_lines.quantity_outlier_count, 0) as quantity_outlier_count,
        coalesce(order_lines.line_without_product_count, 0) as line_without_product_count,
        date_diff('day', contracts.start_date, orders.effective_date) as days_from_contract_start,
        date_diff('day', orders.effective_date, order_lines.first_service_date)
            as days_to_first_service,

        ---------- booleans
        orders.is_currency_conflict,
        orders.status = 'Fulfilled' as is_fulfilled,
        orders.effective_date between contracts.start_date and contracts.end_date
            as is_within_contract_term,

        ---------- dates
        orders.effective_date,
        orders.created_at,
        order_lines.first_service_date,
        contracts.start_date as contract_start_date,
        contracts.end_date as contract_end_date

    from orders
    left join contracts
        on contracts.contract_id = orders.contract_id
    left join order_lines
        on order_lines.order_id = orders.order_id

)

select * from summarized
