with

daily as (

    select * from {{ ref('int_ad_stats_daily') }}

),

final as (

    select
        ---------- ids
        ad_day_id,
        ad_id,
        ad_group_id,
        campaign_id,
        account_id,

        ---------- attributes
        stat_date,
        ad_type,
        channel_type,
        currency,

        ---------- delivery
        report_rows,
        impressions,
        mobile_impressions,
        round(mobile_impressions / nullif(impressions, 0), 4) as mobile_impression_share,
        clicks,
        conversions,
        engagements,
        round(engagements / nullif(impressions, 0), 4) as engagement_rate,

        ---------- money
        cost,
        conversion_value,
        cost_usd,
        conversion_value_usd,

        ---------- ratios
        ctr,
        avg_cpc,
        roas,

        ---------- data quality
        impressions_outlier_rows

    from daily

)

select * from final
