{#-
    Stressors handled here:
    - key_drift on order_id: trimmed and upper-cased (flag is_order_id_drifted).
    - outliers on quantity (x100 from a bad import): total_price is published from the clean
      quantity, so a line whose total_price differs from round(quantity x unit_price, 2) by more
      than a cent is flagged is_quantity_outlier; the quantity is kept as published.
    - missing_values on product_id (manual charges): kept NULL, flag is_product_missing.
-#}
with

source as (

    select * from {{ source('crm', 'order_items') }}

),

renamed as (

    select
        ---------- ids
        order_item_id,
        {{ normalize_key('order_id') }} as order_id,
        {{ normalize_key('product_id') }} as product_id,

        ---------- text
        currency,

        ---------- numerics
        conversion_rate,
        quantity,
        discount_pct,
        {{ to_money('standard_price_usd') }} as standard_price_usd,
        {{ to_money('unit_price') }} as unit_price,
        {{ to_money('total_price') }} as total_price,

        ---------- booleans
        order_id <> {{ normalize_key('order_id') }} as is_order_id_drifted,
        abs(round(quantity * unit_price, 2) - total_price) > 0.01 as is_quantity_outlier,
        product_id is null as is_product_missing,

        ---------- dates
        service_date

    from source

)

select * from renamed
