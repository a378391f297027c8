-- Ad report rows (all devices, repeated report rows) summed to (ad_id, stat_date), with
-- impressions outliers already divided back in staging and a device split of impressions.
with

stats as (

    select * from {{ ref('stg_ads__ad_daily_stats') }}

),

ads as (

    select * from {{ ref('stg_ads__ads') }}

),

rates as (

    select * from {{ ref('int_currency_rates_pinned') }}

),

daily as (

    select
        ad_id,
        stat_date,
        count(*) as report_rows,
        cast(sum(impressions) as bigint) as impressions,
        cast(sum(impressions) filter (where device = 'MOBILE') as bigint) as mobile_impressions,
        cast(sum(clicks) as bigint) as clicks,
        {{ sum_exact('cost') }} as cost,
        cast(sum(conversions) as bigint) as conversions,
        {{ sum_exact('conversion_value') }} as conversion_value,
        cast(sum(engagements) as bigint) as engagements,
        count(*) filter (where is_impressions_outlier) as impressions_outlier_rows

    from stats
    group by ad_id, stat_date

),

final as (

    select
        ---------- ids
        daily.ad_id || ':' || strftime(daily.stat_date, '%Y-%m-%d') as ad_day_id,
        daily.ad_id,
        ads.ad_group_id,
        ads.campaign_id,
        ads.account_id,

        ---------- attributes
        daily.stat_date,
        ads.ad_type,
        ads.channel_type,
        ads.currency,

        ---------- delivery
        daily.report_rows,
        daily.impressions,
        coalesce(daily.mobile_impressions, 0) as mobile_impressions,
        daily.clicks,
        daily.conversions,
        daily.engagements,

        ---------- money (account currency, then USD at pinned rates)
        daily.cost,
        daily.conversion_value,
        round(daily.cost / rates.units_per_usd, 2) as cost_usd,
        round(daily.conversion_value / rates.units_per_usd, 2) as conversion_value_usd,

        ---------- ratios
        round(daily.clicks / nullif(daily.impressions, 0), 4) as ctr,
        round(daily.cost / nullif(daily.clicks, 0), 2) as avg_cpc,
        round(daily.conversion_value / nullif(daily.cost, 0), 4) as roas,

        ---------- data quality
        daily.impressions_outlier_rows

    from daily
    left join ads
        on daily.ad_id = ads.ad_id
    left join rates
        on ads.currency = rates.currency

)

select * from final
