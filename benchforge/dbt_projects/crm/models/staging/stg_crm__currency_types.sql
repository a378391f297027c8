with

source as (

    select * from {{ source('crm', 'currency_types') }}

),

renamed as (

    select
        ---------- ids
        currency_code,

        ---------- text
        currency_name,
        symbol,

        ---------- numerics
        conversion_rate,
        decimal_places,

        ---------- booleans
        is_corporate,

        ---------- dates
        created_at

    from source

)

select * from renamed
