{#-
    User hierarchy: each role's chain of manager roles is resolved recursively; a user's manager is
    the holder of the parent role with the lowest user_id (users 1-15 hold one role each, so this
    is the designated holder); the CEO has no manager.
-#}
with recursive

users as (

    select * from {{ ref('stg_crm__users') }}

),

roles as (

    select * from {{ ref('stg_crm__user_roles') }}

),

role_paths as (

    select
        role_id,
        parent_role_id,
        role_id as top_role_id,
        role_name as role_path,
        1 as path_depth

    from roles
    where parent_role_id is null

    union all

    select
        roles.role_id,
        roles.parent_role_id,
        role_paths.top_role_id,
        role_paths.role_path || ' > ' || roles.role_name as role_path,
        role_paths.path_depth + 1 as path_depth

    from roles
    inner join role_paths
        on roles.parent_role_id = role_paths.role_id

),

role_holders as (

    select
        role_id,
        min(user_id) as primary_holder_user_id,
        count(*) as holder_count

    from users
    group by role_id

),

resolved as (

    select
        ---------- ids
        users.user_id,
        users.role_id,
        roles.parent_role_id,
        manager_holders.primary_holder_user_id as manager_user_id,

        ---------- text
        users.full_name,
        users.email,
        users.title,
        users.department,
        users.user_license,
        users.country,
        users.timezone,
        roles.role_name,
        role_paths.role_path,
        parent_roles.role_name as parent_role_name,

        ---------- numerics
        roles.hierarchy_level,
        role_paths.path_depth as role_depth,
        users.annual_quota_usd,

        ---------- booleans
        users.is_active,
        roles.can_manage_forecasts,
        users.department = 'Sales' as is_sales_user,
        users.user_id = own_holders.primary_holder_user_id as is_primary_role_holder,

        ---------- dates
        users.hired_at,
        users.last_login_at

    from users
    left join roles
        on roles.role_id = users.role_id
    left join role_paths
        on role_paths.role_id = users.role_id
    left join roles as parent_roles
        on parent_roles.role_id = roles.parent_role_id
    left join role_holders as manager_holders
        on manager_holders.role_id = roles.parent_role_id
    left join role_holders as own_holders
        on own_holders.role_id = users.role_id

)

select * from resolved
