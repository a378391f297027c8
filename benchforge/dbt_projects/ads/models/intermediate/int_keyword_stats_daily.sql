-- Keyword report rows (all devices, repeated report rows) summed to (keyword_id, stat_date),
-- with cost outliers already recomputed in staging.
with

stats as (

    select * from {{ ref('stg_ads__keyword_daily_stats') }}

),

keywords as (

    select * from {{ ref('stg_ads__keywords') }}

),

rates as (

    select * from {{ ref('int_currency_rates_pinned') }}

),

daily as (

    select
        keyword_id,
        stat_date,
        count(*) as report_rows,
        cast(sum(impressions) as bigint) as impressions,
        cast(sum(clicks) as bigint) as clicks,
        {{ sum_exact('cost') }} as cost,
        cast(sum(conversions) as bigint) as conversions,
        round(
            sum(cast(top_impression_rate as decimal(18, 4)) * impressions) / nullif(sum(impressions), 0), 4
        ) as top_impression_rate,
        count(*) filter (where is_cost_outlier) as cost_outlier_rows

    from stats
    group by keyword_id, stat_date

),

final as (

    select
        ---------- ids
        daily.keyword_id || ':' || strftime(daily.stat_date, '%Y-%m-%d') as keyword_day_id,
        daily.keyword_id,
        keywords.ad_group_id,
        keywords.campaign_id,
        keywords.account_id,

        ---------- attributes
        daily.stat_date,
        keywords.match_type,
        keywords.currency,

        ---------- delivery
        daily.report_rows,
        daily.impressions,
        daily.clicks,
        daily.conversions,
        daily.top_impression_rate,

        ---------- money (account currency, then USD at pinned rates)
        daily.cost,
        round(daily.cost / rates.units_per_usd, 2) as cost_usd,

        ---------- ratios
        round(daily.clicks / nullif(daily.impressions, 0), 4) as ctr,
        round(daily.cost / nullif(daily.clicks, 0), 2) as avg_cpc,
        round(daily.cost / nullif(daily.conversions, 0), 2) as cost_per_conversion,

        ---------- data quality
        daily.cost_outlier_rows

    from daily
    left join keywords
        on daily.keyword_id = keywords.keyword_id
    left join rates
        on keywords.currency = rates.currency

)

select * from final
