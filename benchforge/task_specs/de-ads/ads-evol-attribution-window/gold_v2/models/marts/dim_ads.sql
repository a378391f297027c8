with

ads as (

    select * from {{ ref('int_ads_current_state') }}

),

delivery as (

    select
        ad_id,
        count(*) as delivery_days,
        cast(sum(impressions) as bigint) as impressions,
        cast(sum(clicks) as bigint) as clicks,
        cast(sum(engagements) as bigint) as engagements,
        {{ sum_exact('cost') }} as lifetime_cost,
        {{ sum_exact('cost_usd') }} as lifetime_cost_usd,
        cast(sum(impressions_outlier_rows) as bigint) as impressions_outlier_rows

    from {{ ref('int_ad_stats_daily') }}
    group by ad_id

),

conversion_events as (

    select
        ad_id,
        count(*) filter (where is_within_attribution_window) as conversion_events,
        count(*) filter (where not is_within_attribution_window) as late_conversion_events,
        min(converted_at) filter (where is_within_attribution_window) as first_converted_at,
        max(converted_at) filter (where is_within_attribution_window) as last_converted_at,
        {{ sum_exact('case when is_within_attribution_window then conversion_value end') }} as conversion_event_value,
        {{ sum_exact('case when is_within_attribution_window then conversion_value_usd end') }}
            as conversion_event_value_usd

    from {{ ref('int_conversions_attributed') }}
    group by ad_id

),

final as (

    select
        ---------- ids
        ads.ad_id,
        ads.ad_group_id,
        ads.campaign_id,
        ads.account_id,
        ads.current_ad_history_id,

        ---------- attributes
        ads.ad_type,
        ads.channel_type,
        ads.country,
        ads.currency,
        ads.headline_1,
        ads.headline_2,
        ads.description,
        ads.final_url,
        ads.display_path,
        ads.status,
        ads.approval_status,
        ads.previous_approval_status,

        ---------- timestamps and history
        ads.created_at,
        ads.version_count,
        ads.last_changed_at,
        ads.status_change_count,
        ads.approval_status_change_count,
        ads.headline_1_change_count,
        ads.repaired_duplicate_current_count,

        ---------- delivery and conversions
        coalesce(delivery.delivery_days, 0) as delivery_days,
        coalesce(delivery.impressions, 0) as impressions,
        coalesce(delivery.clicks, 0) as clicks,
        coalesce(delivery.engagements, 0) as engagements,
        coalesce(delivery.lifetime_cost, 0) as lifetime_cost,
        coalesce(delivery.lifetime_cost_usd, 0) as lifetime_cost_usd,
        coalesce(conversion_events.conversion_events, 0) as conversion_events,
        coalesce(conversion_events.late_conversion_events, 0) as late_conversion_events,
        conversion_events.first_converted_at,
        conversion_events.last_converted_at,
        coalesce(conversion_events.conversion_event_value, 0) as conversion_event_value,
        coalesce(conversion_events.conversion_event_value_usd, 0) as conversion_event_value_usd,

        ---------- data quality
        ads.is_ad_group_id_drifted,
        ads.is_headline_2_missing,
        coalesce(delivery.impressions_outlier_rows, 0) as impressions_outlier_rows

    from ads
    left join delivery
        on ads.ad_id = delivery.ad_id
    left join conversion_events
        on ads.ad_id = conversion_events.ad_id

)

select * from final
