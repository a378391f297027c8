{#-
    Monthly sales-activity scorecard per user: the activities (tasks and events) a user owns, by
    the calendar month of activity_at, up to the end of the snapshot day (meetings booked after
    it are left out).
    - completed_call_count: Call tasks with status Completed (calls that were dialled);
      connect_rate_pct = connected calls / completed calls x 100 (NULL without completed calls).
    - connected_talk_minutes: total duration of the connected calls.
    - meeting_count: events held in the month.
-#}
with

activities as (

    select * from {{ ref('int_activities_unioned') }}
    where not is_after_as_of

),

users as (

    select user_id, full_name, department, manager_user_id
    from {{ ref('int_users_hierarchy_resolved') }}

),

monthly as (

    select
        owner_id,
        activity_month,
        count(*) as activity_count,
        count(*) filter (where activity_type = 'Task') as task_count,
        count(*) filter (where is_call) as call_count,
        count(*) filter (where is_call and is_completed) as completed_call_count,
        count(*) filter (where is_connected_call) as connected_call_count,
        coalesce(
            sum(cast(duration_minutes as decimal(18, 2))) filter (where is_connected_call), 0
        ) as connected_talk_minutes,
        count(*) filter (where activity_subtype in ('Email', 'List Email')) as email_count,
        count(*) filter (where activity_type = 'Event') as meeting_count

    from activities
    group by owner_id, activity_month

),

final as (

    select
        ---------- ids
        monthly.owner_id || '|' || strftime(monthly.activity_month, '%Y-%m') as rep_activity_month_id,
        monthly.owner_id,
        users.manager_user_id,

        ---------- text
        users.full_name as owner_name,
        users.department as owner_department,

        ---------- numerics
        monthly.activity_count,
        monthly.task_count,
        monthly.call_count,
        monthly.completed_call_count,
        monthly.connected_call_count,
        case
            when monthly.completed_call_count > 0
                then round(100.0 * monthly.connected_call_count / monthly.completed_call_count, 2)
        end as connect_rate_pct,
        monthly.connected_talk_minutes,
        monthly.email_count,
        monthly.meeting_count,

        ---------- dates
        monthly.activity_month

    from monthly
    left join users
        on users.user_id = monthly.owner_id

)

select * from final
