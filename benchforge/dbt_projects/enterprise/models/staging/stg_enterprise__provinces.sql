with

source as (

    select * from {{ source('enterprise', 'provinces') }}

),

renamed as (

    select
        ---------- ids
        trim(province) as province,
        trim(admin_code) as admin_code,

        ---------- attributes
        province_cn,
        province_abbr,
        region,
        capital,

        ---------- numerics
        cast(utc_offset_hours as double) as utc_offset_hours

    from source

)

select * from renamed
