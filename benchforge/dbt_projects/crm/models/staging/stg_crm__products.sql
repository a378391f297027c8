with

source as (

    select * from {{ source('crm', 'products') }}

),

renamed as (

    select
        ---------- ids
        product_id,
        product_code,

        ---------- text
        name as product_name,
        family,
        edition,
        description,
        billing_frequency,
        unit_of_measure,

        ---------- numerics
        {{ to_money('list_price') }} as list_price_usd,
        {{ to_money('unit_cost') }} as unit_cost_usd,

        ---------- booleans
        is_active,

        ---------- dates
        created_at

    from source

)

select * from renamed
