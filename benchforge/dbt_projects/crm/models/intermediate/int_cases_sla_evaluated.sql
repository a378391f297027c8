{#-
    Case SLA evaluation.
    - sla_hours by priority: Critical 4, High 24, Medium 72, Low 168.
    - resolution_hours = closed_at - created_at in hours; is_sla_breached: closed and resolution
      longer than the SLA (matches the source's sla_breached on every row).
    - Open cases are aged to the end of the snapshot day; is_open_past_sla flags open cases
      already older than their SLA.
    - first_response_at: the first published (non-Internal) comment.
    - account_id is missing for some cases; cases take their account from the contact by
      construction, so it is backfilled from the contact (is_account_backfilled).
-#}
with

cases as (

    select * from {{ ref('stg_crm__cases') }}

),

contacts as (

    select contact_id, account_id from {{ ref('stg_crm__contacts') }}

),

comment_stats as (

    select
        case_id,
        count(*) as comment_count,
        count(*) filter (where is_published) as published_comment_count,
        min(created_at) filter (where is_published) as first_response_at,
        max(created_at) as last_comment_at

    from {{ ref('stg_crm__case_comments') }}
    group by case_id

),

evaluated as (

    select
        ---------- ids
        cases.case_id,
        cases.case_number,
        cases.contact_id,
        coalesce(cases.account_id, contacts.account_id) as account_id,
        cases.owner_id,
        cases.product_id,

        ---------- text
        cases.origin,
        cases.case_type,
        cases.reason,
        cases.priority,
        cases.status,
        cases.country,

        ---------- numerics
        {{ case_sla_hours('cases.priority') }} as sla_hours,
        round(date_diff('second', cases.created_at, cases.closed_at) / 3600.0, 2) as resolution_hours,
        case
            when cases.closed_at is null
                then round(date_diff('second', cases.created_at, {{ as_of_end_ts() }}) / 3600.0, 2)
        end as open_age_hours,
        round(date_diff('second', cases.created_at, comment_stats.first_response_at) / 3600.0, 2)
            as first_response_hours,
        coalesce(comment_stats.comment_count, 0) as comment_count,
        coalesce(comment_stats.published_comment_count, 0) as published_comment_count,
        cases.csat_score,

        ---------- booleans
        cases.is_closed,
        cases.is_escalated,
        cases.closed_at is not null
            and cases.closed_at - cases.created_at
                > to_hours(cast({{ case_sla_hours('cases.priority') }} as bigint)) as is_sla_breached,
        cases.sla_breached as is_sla_breached_source,
        cases.closed_at is null
            and {{ as_of_end_ts() }} - cases.created_at
                > to_hours(cast({{ case_sla_hours('cases.priority') }} as bigint)) as is_open_past_sla,
        cases.is_account_missing and contacts.account_id is not null as is_account_backfilled,

        ---------- timestamps
        cases.created_at,
        cases.closed_at,
        comment_stats.first_response_at,
        comment_stats.last_comment_at

    from cases
    left join contacts
        on contacts.contact_id = cases.contact_id
    left join comment_stats
        on comment_stats.case_id = cases.case_id

)

select * from evaluated
