{#-
    Tasks and events in one activity stream (timestamps already UTC-corrected in staging).
    - activity_at: a task's created_at, an event's start_at.
    - Task owner_id is missing for some rows; tasks take their owner from the contact by
      construction, so a missing owner is backfilled from the contact (is_owner_backfilled).
    - is_completed: a Completed task, or an event that started before the end of the snapshot day.
    - duration_minutes: an event's duration, or a call's duration in minutes (to 2 decimals).
    - is_call / is_connected_call: call tasks, and those that reached a live conversation
      (disposition Connected); always false for events.
    - activity_month: the calendar month of activity_at.
-#}
with

tasks as (

    select * from {{ ref('stg_crm__tasks') }}

),

events as (

    select * from {{ ref('stg_crm__events') }}

),

contacts as (

    select contact_id, owner_id from {{ ref('stg_crm__contacts') }}

),

task_activities as (

    select
        tasks.task_id as activity_id,
        'Task' as activity_type,
        tasks.task_subtype as activity_subtype,
        tasks.contact_id,
        tasks.account_id,
        coalesce(tasks.owner_id, contacts.owner_id) as owner_id,
        tasks.subject,
        tasks.status,
        tasks.priority,
        tasks.call_disposition,
        tasks.call_duration_minutes as duration_minutes,
        tasks.status = 'Completed' as is_completed,
        tasks.is_call,
        tasks.is_connected_call,
        tasks.owner_id is null and contacts.owner_id is not null as is_owner_backfilled,
        tasks.is_completed_at_tz_corrected as is_timezone_corrected,
        tasks.created_at,
        tasks.created_at as activity_at,
        tasks.completed_at

    from tasks
    left join contacts
        on contacts.contact_id = tasks.contact_id

),

event_activities as (

    select
        event_id as activity_id,
        'Event' as activity_type,
        event_type as activity_subtype,
        contact_id,
        account_id,
        owner_id,
        subject,
        case when start_at < {{ as_of_end_ts() }} then 'Held' else 'Scheduled' end as status,
        null as priority,
        null as call_disposition,
        cast(duration_minutes as double) as duration_minutes,
        start_at < {{ as_of_end_ts() }} as is_completed,
        false as is_call,
        false as is_connected_call,
        false as is_owner_backfilled,
        is_start_at_tz_corrected as is_timezone_corrected,
        created_at,
        start_at as activity_at,
        end_at as completed_at

    from events

),

unioned as (

    select * from task_activities
    union all
    select * from event_activities

),

final as (

    select
        ---------- ids
        activity_id,
        contact_id,
        account_id,
        owner_id,

        ---------- text
        activity_type,
        activity_subtype,
        subject,
        status,
        priority,
        call_disposition,

        ---------- numerics
        duration_minutes,

        ---------- booleans
        is_completed,
        is_call,
        is_connected_call,
        activity_at >= {{ as_of_end_ts() }} as is_after_as_of,
        is_owner_backfilled,
        is_timezone_corrected,

        ---------- timestamps
        created_at,
        activity_at,
        cast(activity_at as date) as activity_date,
        cast(date_trunc('month', activity_at) as date) as activity_month,
        completed_at

    from unioned

)

select * from final
