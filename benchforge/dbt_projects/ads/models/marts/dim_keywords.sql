with

keywords as (

    select * from {{ ref('int_keywords_current_state') }}

),

delivery as (

    select
        keyword_id,
        count(*) as delivery_days,
        cast(sum(impressions) as bigint) as impressions,
        cast(sum(clicks) as bigint) as clicks,
        cast(sum(conversions) as bigint) as conversions,
        {{ sum_exact('cost') }} as lifetime_cost,
        {{ sum_exact('cost_usd') }} as lifetime_cost_usd,
        cast(sum(cost_outlier_rows) as bigint) as cost_outlier_rows

    from {{ ref('int_keyword_stats_daily') }}
    group by keyword_id

),

final as (

    select
        ---------- ids
        keywords.keyword_id,
        keywords.ad_group_id,
        keywords.campaign_id,
        keywords.account_id,
        keywords.current_keyword_history_id,

        ---------- attributes
        keywords.keyword_text,
        keywords.match_type,
        keywords.status,
        keywords.currency,
        keywords.quality_score,
        keywords.previous_quality_score,
        keywords.quality_score is null as is_quality_score_pending,

        ---------- money (account currency)
        keywords.cpc_bid,
        keywords.previous_cpc_bid,
        keywords.first_page_cpc,
        keywords.cpc_bid >= keywords.first_page_cpc as is_bid_above_first_page,

        ---------- timestamps and history
        keywords.created_at,
        keywords.version_count,
        keywords.last_changed_at,
        keywords.status_change_count,
        keywords.cpc_bid_change_count,
        keywords.quality_score_change_count,
        keywords.repaired_duplicate_current_count,

        ---------- delivery
        coalesce(delivery.delivery_days, 0) as delivery_days,
        coalesce(delivery.impressions, 0) as impressions,
        coalesce(delivery.clicks, 0) as clicks,
        coalesce(delivery.conversions, 0) as conversions,
        coalesce(delivery.lifetime_cost, 0) as lifetime_cost,
        coalesce(delivery.lifetime_cost_usd, 0) as lifetime_cost_usd,
        round(delivery.lifetime_cost / nullif(delivery.conversions, 0), 2) as cost_per_conversion,
        coalesce(delivery.cost_outlier_rows, 0) as cost_outlier_rows

    from keywords
    left join delivery
        on keywords.keyword_id = delivery.keyword_id

)

select * from final
