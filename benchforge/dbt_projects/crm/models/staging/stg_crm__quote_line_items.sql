with

source as (

    select * from {{ source('crm', 'quote_line_items') }}

),

renamed as (

    select
        ---------- ids
        quote_line_item_id,
        {{ normalize_key('quote_id') }} as quote_id,
        {{ normalize_key('product_id') }} as product_id,

        ---------- text
        currency,

        ---------- numerics
        conversion_rate,
        quantity,
        discount_pct,
        {{ to_money('standard_price_usd') }} as standard_price_usd,
        {{ to_money('list_price') }} as list_price,
        {{ to_money('unit_price') }} as unit_price,
        {{ to_money('total_price') }} as total_price

    from source

)

select * from renamed
