-- Campaign report rows summed to the natural key (campaign_id, stat_date), with the budget
-- in effect that day taken from the campaign history (the version that started before the end
-- of the day), and money also expressed in USD at the pinned rates. The platform's overdelivery
-- allowance (2 x the daily budget) applies to the budget in effect that day, not to the
-- campaign's current budget.
with

stats as (

    select * from {{ ref('stg_ads__campaign_daily_stats') }}

),

campaigns as (

    select * from {{ ref('stg_ads__campaigns') }}

),

history as (

    select * from {{ ref('stg_ads__campaign_history') }}

),

rates as (

    select * from {{ ref('int_currency_rates_pinned') }}

),

daily as (

    select
        campaign_id,
        stat_date,
        count(*) as report_rows,
        cast(sum(impressions) as bigint) as impressions,
        cast(sum(clicks) as bigint) as clicks,
        {{ sum_exact('cost') }} as cost,
        cast(sum(conversions) as bigint) as conversions,
        {{ sum_exact('conversion_value') }} as conversion_value,
        cast(sum(video_views) as bigint) as video_views,
        round(
            sum(cast(search_impression_share as decimal(18, 4)) * impressions)
            / nullif(sum(impressions) filter (where search_impression_share is not null), 0),
            4
        ) as search_impression_share,
        count(*) filter (where is_conversions_missing) as missing_conversions_rows,
        count(*) filter (where is_cost_outlier) as cost_outlier_rows,
        count(*) filter (where has_currency_conflict) as currency_conflict_rows

    from stats
    group by campaign_id, stat_date

),

budget_in_effect as (

    select
        daily.campaign_id,
        daily.stat_date,
        history.campaign_history_id,
        history.daily_budget

    from daily
    inner join history
        on daily.campaign_id = history.campaign_id
        and history.valid_from < daily.stat_date + interval 1 day
        and (history.valid_to is null or history.valid_to >= daily.stat_date + interval 1 day)

),

final as (

    select
        ---------- ids
        daily.campaign_id || ':' || strftime(daily.stat_date, '%Y-%m-%d') as campaign_day_id,
        daily.campaign_id,
        campaigns.account_id,
        budget_in_effect.campaign_history_id as budget_campaign_history_id,

        ---------- attributes
        daily.stat_date,
        campaigns.channel_type,
        campaigns.currency,

        ---------- delivery
        daily.report_rows,
        daily.impressions,
        daily.clicks,
        daily.conversions,
        daily.video_views,
        daily.search_impression_share,

        ---------- money (account currency)
        daily.cost,
        daily.conversion_value,
        campaigns.daily_budget,
        budget_in_effect.daily_budget as budget_in_effect,
        round(2 * budget_in_effect.daily_budget, 2) as overdelivery_cap,

        ---------- money (USD at pinned rates)
        round(daily.cost / rates.units_per_usd, 2) as cost_usd,
        round(daily.conversion_value / rates.units_per_usd, 2) as conversion_value_usd,

        ---------- ratios
        round(daily.clicks / nullif(daily.impressions, 0), 4) as ctr,
        round(daily.cost / nullif(daily.clicks, 0), 2) as avg_cpc,
        round(daily.cost / nullif(daily.conversions, 0), 2) as cost_per_conversion,
        round(daily.conversion_value / nullif(daily.cost, 0), 4) as roas,
        round(daily.cost / nullif(campaigns.daily_budget, 0), 4) as budget_utilization,

        ---------- data quality
        daily.missing_conversions_rows,
        daily.cost_outlier_rows,
        daily.currency_conflict_rows,
        daily.cost > round(2 * budget_in_effect.daily_budget, 2) as exceeds_overdelivery_cap

    from daily
    left join campaigns
        on daily.campaign_id = campaigns.campaign_id
    left join budget_in_effect
        on daily.campaign_id = budget_in_effect.campaign_id
        and daily.stat_date = budget_in_effect.stat_date
    left join rates
        on campaigns.currency = rates.currency

)

select * from final
