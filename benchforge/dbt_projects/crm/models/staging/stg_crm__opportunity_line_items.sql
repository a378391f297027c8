{#-
    Stressor handled here: outliers on unit_price (x100, entered in the wrong unit). total_price is
    published from the clean price, so a line whose total_price differs from
    round(quantity x unit_price, 2) by more than a cent is flagged is_unit_price_outlier; the
    price is kept as entered and total_price stays the revenue of the line.
-#}
with

source as (

    select * from {{ source('crm', 'opportunity_line_items') }}

),

renamed as (

    select
        ---------- ids
        opportunity_line_item_id,
        {{ normalize_key('opportunity_id') }} as opportunity_id,
        {{ normalize_key('product_id') }} as product_id,

        ---------- text
        product_code,
        currency,
        description,

        ---------- numerics
        conversion_rate,
        quantity,
        discount_pct,
        {{ to_money('standard_price_usd') }} as standard_price_usd,
        {{ to_money('list_price') }} as list_price,
        {{ to_money('unit_price') }} as unit_price,
        {{ to_money('total_price') }} as total_price,

        ---------- booleans
        abs(round(quantity * unit_price, 2) - total_price) > 0.01 as is_unit_price_outlier,

        ---------- dates
        service_date,
        created_at

    from source

)

select * from renamed
