-- currency_conflict on orders resolved: every order line is in its order's (resolved) currency,
-- and the order's account equals its contract's account.
select
    order_items.order_item_id

from {{ ref('stg_crm__order_items') }} as order_items
inner join {{ ref('stg_crm__orders') }} as orders
    on orders.order_id = order_items.order_id
inner join {{ ref('stg_crm__contracts') }} as contracts
    on contracts.contract_id = orders.contract_id
where order_items.currency <> orders.currency
    or orders.account_id <> contracts.account_id
