with

source as (

    select * from {{ source('crm', 'price_books') }}

),

renamed as (

    select
        ---------- ids
        price_book_id,

        ---------- text
        name as price_book_name,
        currency,
        book_type,
        description,

        ---------- numerics
        discount_factor,

        ---------- booleans
        is_standard,
        is_active,

        ---------- dates
        valid_from

    from source

)

select * from renamed
