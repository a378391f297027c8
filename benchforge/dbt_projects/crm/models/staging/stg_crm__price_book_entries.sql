with

source as (

    select * from {{ source('crm', 'price_book_entries') }}

),

renamed as (

    select
        ---------- ids
        price_book_entry_id,
        {{ normalize_key('price_book_id') }} as price_book_id,
        {{ normalize_key('product_id') }} as product_id,

        ---------- text
        currency,

        ---------- numerics
        book_discount_factor,
        conversion_rate,
        {{ to_money('standard_price_usd') }} as standard_price_usd,
        {{ to_money('unit_price') }} as unit_price,

        ---------- booleans
        use_standard_price,
        is_active,

        ---------- dates
        created_at

    from source

)

select * from renamed
