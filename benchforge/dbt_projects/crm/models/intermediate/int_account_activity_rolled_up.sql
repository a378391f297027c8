{#-
    Per-account rollups as of the snapshot, rebuilt from the cleaned facts. The definitions follow
    the source system's account_activity_summary so the two can be reconciled (see the singular
    test assert_account_rollup_matches_source_summary), plus:
    - won_amount_usd / open_pipeline_usd sum amount_usd_clean, i.e. they leave out flagged x1000
      amount outliers (the source summary was computed before the outliers were injected);
    - last_activity_at: the later of the last task creation and the last event start up to the
      end of the snapshot day;
    - contract and order counts.
-#}
with

accounts as (

    select account_id from {{ ref('stg_crm__accounts') }}

),

contact_stats as (

    select account_id, count(*) as contact_count
    from {{ ref('stg_crm__contacts') }}
    group by account_id

),

opportunity_stats as (

    select
        account_id,
        count(*) as opportunity_count,
        count(*) filter (where is_open) as open_opportunity_count,
        count(*) filter (where is_won) as won_opportunity_count,
        count(*) filter (where is_amount_outlier) as amount_outlier_count,
        coalesce(sum(amount_usd_clean) filter (where is_won), 0) as won_amount_usd,
        coalesce(sum(amount_usd_clean) filter (where is_open), 0) as open_pipeline_usd,
        min(created_at) as first_opportunity_at

    from {{ ref('int_opportunities_enriched') }}
    group by account_id

),

activity_stats as (

    select
        account_id,
        count(*) filter (where activity_type = 'Task') as task_count,
        count(*) filter (where activity_type = 'Event') as event_count,
        max(activity_at) filter (where activity_type = 'Task') as last_task_at,
        max(activity_at) filter (
            where activity_type = 'Event' and not is_after_as_of
        ) as last_event_at

    from {{ ref('int_activities_unioned') }}
    group by account_id

),

case_stats as (

    select
        account_id,
        count(*) as case_count,
        count(*) filter (where status <> 'Closed') as open_case_count

    from {{ ref('int_cases_sla_evaluated') }}
    where account_id is not null
    group by account_id

),

contract_stats as (

    select
        account_id,
        count(*) as contract_count,
        count(*) filter (
            where start_date <= {{ as_of_date() }} and end_date >= {{ as_of_date() }}
        ) as active_contract_count

    from {{ ref('stg_crm__contracts') }}
    group by account_id

),

order_stats as (

    select
        account_id,
        count(*) as order_count,
        coalesce(sum(order_total_usd) filter (where status <> 'Cancelled'), 0) as order_total_usd

    from {{ ref('int_orders_summarized') }}
    group by account_id

),

rolled_up as (

    select
        ---------- ids
        accounts.account_id,

        ---------- numerics
        coalesce(contact_stats.contact_count, 0) as contact_count,
        coalesce(opportunity_stats.opportunity_count, 0) as opportunity_count,
        coalesce(opportunity_stats.open_opportunity_count, 0) as open_opportunity_count,
        coalesce(opportunity_stats.won_opportunity_count, 0) as won_opportunity_count,
        coalesce(opportunity_stats.amount_outlier_count, 0) as amount_outlier_count,
        coalesce(opportunity_stats.won_amount_usd, 0) as won_amount_usd,
        coalesce(opportunity_stats.open_pipeline_usd, 0) as open_pipeline_usd,
        coalesce(activity_stats.task_count, 0) as task_count,
        coalesce(activity_stats.event_count, 0) as event_count,
        coalesce(case_stats.case_count, 0) as case_count,
        coalesce(case_stats.open_case_count, 0) as open_case_count,
        coalesce(contract_stats.contract_count, 0) as contract_count,
        coalesce(contract_stats.active_contract_count, 0) as active_contract_count,
        coalesce(order_stats.order_count, 0) as order_count,
        coalesce(order_stats.order_total_usd, 0) as order_total_usd,

        ---------- timestamps
        greatest(activity_stats.last_task_at, activity_stats.last_event_at) as last_activity_at,
        opportunity_stats.first_opportunity_at

    from accounts
    left join contact_stats
        on contact_stats.account_id = accounts.account_id
    left join opportunity_stats
        on opportunity_stats.account_id = accounts.account_id
    left join activity_stats
        on activity_stats.account_id = accounts.account_id
    left join case_stats
        on case_stats.account_id = accounts.account_id
    left join contract_stats
        on contract_stats.account_id = accounts.account_id
    left join order_stats
        on order_stats.account_id = accounts.account_id

)

select * from rolled_up
