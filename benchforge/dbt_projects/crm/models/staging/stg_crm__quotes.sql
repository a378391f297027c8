with

source as (

    select * from {{ source('crm', 'quotes') }}

),

renamed as (

    select
        ---------- ids
        quote_id,
        {{ normalize_key('opportunity_id') }} as opportunity_id,
        {{ normalize_key('account_id') }} as account_id,
        {{ normalize_key('owner_id') }} as owner_id,
        quote_number,

        ---------- text
        name as quote_name,
        status,
        currency,
        description,

        ---------- numerics
        conversion_rate,
        discount_pct,
        tax_rate,
        {{ to_money('shipping_handling') }} as shipping_handling,

        ---------- booleans
        is_syncing,

        ---------- dates
        opportunity_created_at,
        opportunity_close_date,
        created_at,
        expiration_date

    from source

)

select * from renamed
