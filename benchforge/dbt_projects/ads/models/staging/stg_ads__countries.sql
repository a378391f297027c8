with

source as (

    select * from {{ source('ads', 'countries') }}

),

renamed as (

    select
        ---------- ids
        upper(trim(country)) as country,

        ---------- attributes
        country_name,
        upper(trim(currency)) as currency,
        timezone,
        locale,

        ---------- numerics
        cast(utc_offset_hours as double) as utc_offset_hours

    from source

)

select * from renamed
