with

source as (

    select * from {{ source('crm', 'user_roles') }}

),

renamed as (

    select
        ---------- ids
        role_id,
        parent_role_id,

        ---------- text
        role_name,
        department,

        ---------- numerics
        hierarchy_level,

        ---------- booleans
        can_manage_forecasts,

        ---------- dates
        created_at

    from source

)

select * from renamed
