-- Monthly budget pacing per campaign: cost delivered against the budget capacity of the days
-- with delivery. The pacing status is judged against the budget in effect each day (from the
-- history); the status the platform publishes (current daily budget x delivery days) is kept
-- as published_pacing_status. Also the monthly charging limit (30.4 x current daily budget),
-- the number of budget versions in effect during the month, and the reconciliation with the
-- published campaign_monthly_pacing.
with

daily as (

    select * from {{ ref('int_campaign_stats_daily') }}

),

reported as (

    select * from {{ ref('stg_ads__campaign_monthly_pacing') }}

),

monthly as (

    select
        campaign_id,
        cast(date_trunc('month', stat_date) as date) as stat_month,
        count(*) as delivery_days,
        {{ sum_exact('cost') }} as cost,
        {{ sum_exact('cost_usd') }} as cost_usd,
        {{ sum_exact('budget_in_effect') }} as budget_capacity_in_effect,
        count(distinct budget_campaign_history_id) as budget_versions_in_effect,
        count(*) filter (where exceeds_overdelivery_cap) as days_over_overdelivery_cap

    from daily
    group by campaign_id, cast(date_trunc('month', stat_date) as date)

),

campaigns as (

    select * from {{ ref('stg_ads__campaigns') }}

),

measured as (

    select
        monthly.campaign_id || ':' || strftime(monthly.stat_month, '%Y-%m') as pacing_id,
        monthly.campaign_id,
        campaigns.account_id,
        monthly.stat_month,
        campaigns.currency,
        campaigns.daily_budget,
        monthly.delivery_days,
        cast(dayofmonth(last_day(monthly.stat_month)) as integer) as days_in_month,
        monthly.cost,
        monthly.cost_usd,
        round(campaigns.daily_budget * monthly.delivery_days, 2) as budget_capacity,
        monthly.budget_capacity_in_effect,
        monthly.budget_versions_in_effect,
        round(campaigns.daily_budget * 30.4, 2) as monthly_charge_limit,
        monthly.days_over_overdelivery_cap

    from monthly
    left join campaigns
        on monthly.campaign_id = campaigns.campaign_id

),

final as (

    select
        measured.*,
        round(measured.cost / nullif(measured.budget_capacity, 0), 4) as utilization,
        round(measured.cost / nullif(measured.budget_capacity_in_effect, 0), 4) as utilization_in_effect,
        round(measured.cost / nullif(measured.monthly_charge_limit, 0), 4) as monthly_limit_utilization,
        case
            when measured.cost > 2 * measured.budget_capacity_in_effect then 'OVER_CAP'
            when measured.cost > measured.budget_capacity_in_effect then 'OVER_PACING'
            when measured.cost >= 0.5 * measured.budget_capacity_in_effect then 'ON_PACE'
            else 'UNDER_PACING'
        end as pacing_status,
        case
            when measured.cost > 2 * measured.budget_capacity then 'OVER_CAP'
            when measured.cost > measured.budget_capacity then 'OVER_PACING'
            when measured.cost >= 0.5 * measured.budget_capacity then 'ON_PACE'
            else 'UNDER_PACING'
        end as published_pacing_status,
        measured.budget_versions_in_effect > 1 as is_budget_changed_in_month,
        measured.cost > measured.monthly_charge_limit as is_over_monthly_charge_limit,

        ---------- reconciliation with the published pacing
        reported.cost as reported_cost,
        reported.delivery_days as reported_delivery_days,
        reported.utilization as reported_utilization,
        round(measured.cost - reported.cost, 2) as cost_gap

    from measured
    left join reported
        on measured.pacing_id = reported.pacing_id

)

select * from final
