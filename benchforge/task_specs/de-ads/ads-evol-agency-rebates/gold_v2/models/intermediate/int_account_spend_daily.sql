-- Campaign-days summed to account x day, reconciled with the published account_daily_spend
-- (which was computed upstream from the clean stats, before any stressor).
with

daily as (

    select * from {{ ref('int_campaign_stats_daily') }}

),

reported as (

    select * from {{ ref('stg_ads__account_daily_spend') }}

),

accounts as (

    select * from {{ ref('stg_ads__ad_accounts') }}

),

spend as (

    select
        account_id,
        stat_date,
        count(*) as active_campaigns,
        cast(sum(impressions) as bigint) as impressions,
        cast(sum(clicks) as bigint) as clicks,
        {{ sum_exact('cost') }} as cost,
        {{ sum_exact('cost_usd') }} as cost_usd,
        cast(sum(conversions) as bigint) as conversions,
        {{ sum_exact('conversion_value') }} as conversion_value,
        {{ sum_exact('conversion_value_usd') }} as conversion_value_usd,
        cast(sum(missing_conversions_rows) as bigint) as missing_conversions_rows

    from daily
    group by account_id, stat_date

),

final as (

    select
        ---------- ids
        spend.account_id || ':' || strftime(spend.stat_date, '%Y-%m-%d') as account_day_id,
        spend.account_id,
        accounts.agency_id,

        ---------- attributes
        spend.stat_date,
        accounts.currency,

        ---------- delivery and money
        spend.active_campaigns,
        spend.impressions,
        spend.clicks,
        spend.conversions,
        spend.cost,
        spend.conversion_value,
        spend.cost_usd,
        spend.conversion_value_usd,
        spend.missing_conversions_rows,

        ---------- reconciliation with the published account_daily_spend
        reported.cost as reported_cost,
        reported.conversions as reported_conversions,
        round(spend.cost - reported.cost, 2) as cost_gap,
        spend.impressions - reported.impressions as impressions_gap,
        reported.conversions - coalesce(spend.conversions, 0) as conversions_not_reported

    from spend
    left join accounts
        on spend.account_id = accounts.account_id
    left join reported
        on spend.account_id || ':' || strftime(spend.stat_date, '%Y-%m-%d') = reported.account_day_id

)

select * from final
