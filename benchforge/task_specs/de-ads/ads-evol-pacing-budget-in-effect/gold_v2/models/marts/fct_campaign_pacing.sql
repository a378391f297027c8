with

pacing as (

    select * from {{ ref('int_campaign_pacing_monthly') }}

),

final as (

    select
        ---------- ids
        pacing_id,
        campaign_id,
        account_id,

        ---------- attributes
        stat_month,
        currency,
        last_day(stat_month) <= cast('{{ var("as_of_date") }}' as date) as is_month_complete,
        days_in_month,
        delivery_days,

        ---------- money (account currency)
        daily_budget,
        cost,
        budget_capacity,
        budget_capacity_in_effect,
        monthly_charge_limit,
        cost_usd,

        ---------- pacing
        utilization,
        utilization_in_effect,
        monthly_limit_utilization,
        pacing_status,
        published_pacing_status,
        pacing_status <> published_pacing_status as is_status_revised_by_budget_history,
        budget_versions_in_effect,
        is_budget_changed_in_month,
        is_over_monthly_charge_limit,
        days_over_overdelivery_cap,

        ---------- reconciliation
        reported_cost,
        reported_utilization,
        cost_gap

    from pacing

)

select * from final
