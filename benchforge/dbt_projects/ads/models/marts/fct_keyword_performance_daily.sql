with

daily as (

    select * from {{ ref('int_keyword_stats_daily') }}

),

keywords as (

    select * from {{ ref('stg_ads__keywords') }}

),

final as (

    select
        ---------- ids
        daily.keyword_day_id,
        daily.keyword_id,
        daily.ad_group_id,
        daily.campaign_id,
        daily.account_id,

        ---------- attributes
        daily.stat_date,
        daily.match_type,
        daily.currency,
        keywords.quality_score,

        ---------- delivery
        daily.report_rows,
        daily.impressions,
        daily.clicks,
        daily.conversions,
        daily.top_impression_rate,

        ---------- money
        daily.cost,
        daily.cost_usd,

        ---------- ratios
        daily.ctr,
        daily.avg_cpc,
        daily.cost_per_conversion,
        round(daily.avg_cpc / nullif(keywords.cpc_bid, 0), 4) as bid_utilization,

        ---------- data quality
        daily.cost_outlier_rows

    from daily
    left join keywords
        on daily.keyword_id = keywords.keyword_id

)

select * from final
