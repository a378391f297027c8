with

source as (

    select * from {{ source('crm', 'countries') }}

),

renamed as (

    select
        ---------- ids
        country_code,

        ---------- text
        country_name,
        region,
        currency,
        timezone,
        locale,

        ---------- numerics
        utc_offset_hours,

        ---------- dates
        created_at

    from source

)

select * from renamed
