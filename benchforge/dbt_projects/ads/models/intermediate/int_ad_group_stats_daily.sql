-- Ad group report rows (all devices, repeated report rows) summed to (ad_group_id, stat_date).
-- Blank clicks are not imputed: clicks sums the reported rows, and ctr only uses the
-- impressions of rows whose clicks were reported.
with

stats as (

    select * from {{ ref('stg_ads__ad_group_daily_stats') }}

),

ad_groups as (

    select * from {{ ref('stg_ads__ad_groups') }}

),

rates as (

    select * from {{ ref('int_currency_rates_pinned') }}

),

daily as (

    select
        ad_group_id,
        stat_date,
        count(*) as report_rows,
        cast(sum(impressions) as bigint) as impressions,
        cast(sum(impressions) filter (where clicks is not null) as bigint) as impressions_with_clicks,
        cast(sum(clicks) as bigint) as clicks,
        {{ sum_exact('cost') }} as cost,
        cast(sum(conversions) as bigint) as conversions,
        {{ sum_exact('conversion_value') }} as conversion_value,
        count(*) filter (where is_clicks_missing) as missing_clicks_rows

    from stats
    group by ad_group_id, stat_date

),

final as (

    select
        ---------- ids
        daily.ad_group_id || ':' || strftime(daily.stat_date, '%Y-%m-%d') as ad_group_day_id,
        daily.ad_group_id,
        ad_groups.campaign_id,
        ad_groups.account_id,

        ---------- attributes
        daily.stat_date,
        ad_groups.channel_type,
        ad_groups.currency,

        ---------- delivery
        daily.report_rows,
        daily.impressions,
        daily.clicks,
        daily.conversions,

        ---------- money (account currency, then USD at pinned rates)
        daily.cost,
        daily.conversion_value,
        round(daily.cost / rates.units_per_usd, 2) as cost_usd,
        round(daily.conversion_value / rates.units_per_usd, 2) as conversion_value_usd,

        ---------- ratios
        round(daily.clicks / nullif(daily.impressions_with_clicks, 0), 4) as ctr,
        round(daily.cost / nullif(daily.clicks, 0), 2) as avg_cpc,

        ---------- data quality
        daily.missing_clicks_rows

    from daily
    left join ad_groups
        on daily.ad_group_id = ad_groups.ad_group_id
    left join rates
        on ad_groups.currency = rates.currency

)

select * from final
