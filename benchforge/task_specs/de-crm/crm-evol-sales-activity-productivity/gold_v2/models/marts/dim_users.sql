{#-
    quota attainment: Closed Won amount_usd_clean of opportunities owned by the user whose
    close_date falls in the snapshot's calendar year, over the annual quota (NULL without quota).
    activity: activities (tasks and events) the user owns up to the end of the snapshot day;
    the 90-day window is the 90 days up to the end of the snapshot day.
-#}
with

users as (

    select * from {{ ref('int_users_hierarchy_resolved') }}

),

managers as (

    select user_id, full_name from {{ ref('int_users_hierarchy_resolved') }}

),

account_stats as (

    select owner_id, count(*) as owned_account_count
    from {{ ref('stg_crm__accounts') }}
    group by owner_id

),

opportunity_stats as (

    select
        owner_id,
        count(*) filter (where is_open) as open_opportunity_count,
        coalesce(sum(amount_usd_clean) filter (where is_open), 0) as open_pipeline_usd,
        count(*) filter (
            where is_won and year(close_date) = year({{ as_of_date() }})
        ) as won_opportunity_count_ytd,
        coalesce(sum(amount_usd_clean) filter (
            where is_won and year(close_date) = year({{ as_of_date() }})
        ), 0) as won_amount_usd_ytd

    from {{ ref('int_opportunities_enriched') }}
    group by owner_id

),

activity_stats as (

    select
        owner_id,
        count(*) filter (
            where activity_at >= {{ as_of_end_ts() }} - interval 90 day
        ) as activity_count_90d,
        count(*) filter (
            where is_connected_call and activity_at >= {{ as_of_end_ts() }} - interval 90 day
        ) as connected_call_count_90d,
        max(activity_at) as last_activity_at

    from {{ ref('int_activities_unioned') }}
    where not is_after_as_of
    group by owner_id

),

case_stats as (

    select
        owner_id,
        count(*) as owned_case_count,
        count(*) filter (where not is_closed) as open_case_count

    from {{ ref('int_cases_sla_evaluated') }}
    group by owner_id

),

final as (

    select
        ---------- ids
        users.user_id,
        users.role_id,
        users.manager_user_id,

        ---------- text
        users.full_name,
        users.email,
        users.title,
        users.department,
        users.role_name,
        users.role_path,
        managers.full_name as manager_name,
        users.user_license,
        users.country,

        ---------- numerics
        users.hierarchy_level,
        users.annual_quota_usd,
        coalesce(account_stats.owned_account_count, 0) as owned_account_count,
        coalesce(opportunity_stats.open_opportunity_count, 0) as open_opportunity_count,
        coalesce(opportunity_stats.open_pipeline_usd, 0) as open_pipeline_usd,
        coalesce(opportunity_stats.won_opportunity_count_ytd, 0) as won_opportunity_count_ytd,
        coalesce(opportunity_stats.won_amount_usd_ytd, 0) as won_amount_usd_ytd,
        case
            when users.annual_quota_usd > 0
                then round(
                    100.0 * coalesce(opportunity_stats.won_amount_usd_ytd, 0) / users.annual_quota_usd, 2
                )
        end as quota_attainment_pct,
        coalesce(case_stats.owned_case_count, 0) as owned_case_count,
        coalesce(case_stats.open_case_count, 0) as open_case_count,
        coalesce(activity_stats.activity_count_90d, 0) as activity_count_90d,
        coalesce(activity_stats.connected_call_count_90d, 0) as connected_call_count_90d,
        date_diff('day', cast(activity_stats.last_activity_at as date), {{ as_of_date() }})
            as days_since_last_activity,

        ---------- booleans
        users.is_active,
        users.is_sales_user,
        users.can_manage_forecasts,
        users.is_primary_role_holder,

        ---------- timestamps
        users.hired_at,
        users.last_login_at,
        activity_stats.last_activity_at

    from users
    left join managers
        on managers.user_id = users.manager_user_id
    left join account_stats
        on account_stats.owner_id = users.user_id
    left join opportunity_stats
        on opportunity_stats.owner_id = users.user_id
    left join case_stats
        on case_stats.owner_id = users.user_id
    left join activity_stats
        on activity_stats.owner_id = users.user_id

)

select * from final
