with

source as (

    select * from {{ source('crm', 'users') }}

),

renamed as (

    select
        ---------- ids
        user_id,
        role_id,

        ---------- text
        first_name,
        last_name,
        trim(coalesce(first_name, '') || ' ' || coalesce(last_name, '')) as full_name,
        email,
        phone,
        title,
        department,
        user_license,
        country,
        locale,
        timezone,

        ---------- numerics
        {{ to_money('annual_quota') }} as annual_quota_usd,

        ---------- booleans
        is_active,

        ---------- dates
        hired_at,
        last_login_at

    from source

)

select * from renamed
