{#-
    Contact engagement as of the snapshot, from tasks, events, campaign memberships and cases.
    Activities after the snapshot (meetings already booked) are counted apart and ignored for
    recency. engagement_level: High = 5+ activities in the 90 days up to the snapshot, Medium =
    1-4, Low = none in 90 days but some before, None = no activity ever.
-#}
with

contacts as (

    select contact_id, account_id from {{ ref('stg_crm__contacts') }}

),

activities as (

    select * from {{ ref('int_activities_unioned') }}

),

activity_stats as (

    select
        contact_id,
        count(*) filter (where activity_type = 'Task') as task_count,
        count(*) filter (where activity_type = 'Task' and is_completed) as completed_task_count,
        count(*) filter (where activity_subtype = 'Call') as call_count,
        count(*) filter (where activity_subtype in ('Email', 'List Email')) as email_count,
        count(*) filter (where activity_type = 'Event') as event_count,
        count(*) filter (where activity_type = 'Event' and is_completed) as meetings_held_count,
        count(*) filter (where is_after_as_of) as scheduled_after_as_of_count,
        count(*) filter (
            where not is_after_as_of
                and activity_at >= {{ as_of_end_ts() }} - interval 90 day
        ) as activity_count_90d,
        min(activity_at) filter (where not is_after_as_of) as first_activity_at,
        max(activity_at) filter (where not is_after_as_of) as last_activity_at

    from activities
    group by contact_id

),

membership_stats as (

    select
        contact_id,
        count(*) as campaign_membership_count,
        count(*) filter (where has_responded) as campaign_response_count

    from {{ ref('stg_crm__campaign_members') }}
    group by contact_id

),

case_stats as (

    select
        contact_id,
        count(*) as case_count

    from {{ ref('stg_crm__cases') }}
    group by contact_id

),

aggregated as (

    select
        ---------- ids
        contacts.contact_id,
        contacts.account_id,

        ---------- numerics
        coalesce(activity_stats.task_count, 0) as task_count,
        coalesce(activity_stats.completed_task_count, 0) as completed_task_count,
        coalesce(activity_stats.call_count, 0) as call_count,
        coalesce(activity_stats.email_count, 0) as email_count,
        coalesce(activity_stats.event_count, 0) as event_count,
        coalesce(activity_stats.meetings_held_count, 0) as meetings_held_count,
        coalesce(activity_stats.scheduled_after_as_of_count, 0) as scheduled_after_as_of_count,
        coalesce(activity_stats.activity_count_90d, 0) as activity_count_90d,
        coalesce(membership_stats.campaign_membership_count, 0) as campaign_membership_count,
        coalesce(membership_stats.campaign_response_count, 0) as campaign_response_count,
        coalesce(case_stats.case_count, 0) as case_count,
        date_diff('day', cast(activity_stats.last_activity_at as date), {{ as_of_date() }})
            as days_since_last_activity,

        ---------- text
        case
            when coalesce(activity_stats.activity_count_90d, 0) >= 5 then 'High'
            when coalesce(activity_stats.activity_count_90d, 0) >= 1 then 'Medium'
            when activity_stats.last_activity_at is not null then 'Low'
            else 'None'
        end as engagement_level,

        ---------- timestamps
        activity_stats.first_activity_at,
        activity_stats.last_activity_at

    from contacts
    left join activity_stats
        on activity_stats.contact_id = contacts.contact_id
    left join membership_stats
        on membership_stats.contact_id = contacts.contact_id
    left join case_stats
        on case_stats.contact_id = contacts.contact_id

)

select * from aggregated
