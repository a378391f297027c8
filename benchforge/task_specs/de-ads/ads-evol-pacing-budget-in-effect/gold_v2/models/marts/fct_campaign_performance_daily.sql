with

daily as (

    select * from {{ ref('int_campaign_stats_daily') }}

),

final as (

    select
        ---------- ids
        campaign_day_id,
        campaign_id,
        account_id,
        budget_campaign_history_id,

        ---------- attributes
        stat_date,
        channel_type,
        currency,

        ---------- delivery
        report_rows,
        impressions,
        clicks,
        conversions,
        video_views,
        search_impression_share,

        ---------- money (account currency)
        cost,
        conversion_value,
        daily_budget,
        budget_in_effect,
        overdelivery_cap,
        round(overdelivery_cap - cost, 2) as overdelivery_headroom,

        ---------- money (USD at pinned rates)
        cost_usd,
        conversion_value_usd,

        ---------- ratios
        ctr,
        avg_cpc,
        cost_per_conversion,
        roas,
        budget_utilization,
        round(cost / nullif(budget_in_effect, 0), 4) as budget_in_effect_utilization,

        ---------- data quality
        exceeds_overdelivery_cap,
        missing_conversions_rows,
        cost_outlier_rows,
        currency_conflict_rows

    from daily

)

select * from final
