with

spend as (

    select * from {{ ref('int_account_spend_daily') }}

),

accounts as (

    select * from {{ ref('stg_ads__ad_accounts') }}

),

with_running_totals as (

    select
        ---------- ids
        spend.account_day_id,
        spend.account_id,

        ---------- attributes
        spend.stat_date,
        spend.currency,
        accounts.country,

        ---------- delivery
        spend.active_campaigns,
        spend.impressions,
        spend.clicks,
        spend.conversions,

        ---------- money
        spend.cost,
        spend.conversion_value,
        spend.cost_usd,
        spend.conversion_value_usd,
        cast(
            sum(cast(spend.cost_usd as decimal(38, 2))) over (
                partition by spend.account_id, date_trunc('month', spend.stat_date)
                order by spend.stat_date
                rows between unbounded preceding and current row
            ) as double
        ) as month_to_date_cost_usd,
        accounts.monthly_spend_limit_usd,

        ---------- reconciliation
        spend.reported_cost,
        spend.cost_gap,
        spend.conversions_not_reported,
        spend.missing_conversions_rows

    from spend
    left join accounts
        on spend.account_id = accounts.account_id

),

final as (

    select
        with_running_totals.*,
        coalesce(
            with_running_totals.month_to_date_cost_usd > with_running_totals.monthly_spend_limit_usd,
            false
        ) as is_over_credit_line

    from with_running_totals

)

select * from final
