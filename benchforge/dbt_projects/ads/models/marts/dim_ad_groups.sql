with

ad_groups as (

    select * from {{ ref('int_ad_groups_current_state') }}

),

campaigns as (

    select * from {{ ref('stg_ads__campaigns') }}

),

children as (

    select ad_group_id, count(*) as ads, 0 as keywords from {{ ref('stg_ads__ads') }} group by ad_group_id
    union all
    select ad_group_id, 0 as ads, count(*) as keywords from {{ ref('stg_ads__keywords') }} group by ad_group_id

),

child_counts as (

    select
        ad_group_id,
        sum(ads) as ads,
        sum(keywords) as keywords

    from children
    group by ad_group_id

),

delivery as (

    select
        ad_group_id,
        count(*) as delivery_days,
        cast(sum(impressions) as bigint) as impressions,
        cast(sum(clicks) as bigint) as clicks,
        {{ sum_exact('cost') }} as lifetime_cost,
        {{ sum_exact('cost_usd') }} as lifetime_cost_usd,
        cast(sum(missing_clicks_rows) as bigint) as missing_clicks_rows

    from {{ ref('int_ad_group_stats_daily') }}
    group by ad_group_id

),

final as (

    select
        ---------- ids
        ad_groups.ad_group_id,
        ad_groups.campaign_id,
        ad_groups.account_id,
        ad_groups.current_ad_group_history_id,

        ---------- attributes
        ad_groups.ad_group_name,
        ad_groups.ad_group_type,
        campaigns.campaign_name,
        ad_groups.channel_type,
        ad_groups.currency,
        ad_groups.status,
        ad_groups.audience_targeting,

        ---------- money (account currency)
        ad_groups.cpc_bid,
        ad_groups.previous_cpc_bid,

        ---------- timestamps and history
        ad_groups.created_at,
        ad_groups.version_count,
        ad_groups.last_changed_at,
        ad_groups.status_change_count,
        ad_groups.cpc_bid_change_count,
        ad_groups.repaired_duplicate_current_count,

        ---------- structure and delivery
        cast(coalesce(child_counts.ads, 0) as bigint) as ads,
        cast(coalesce(child_counts.keywords, 0) as bigint) as keywords,
        coalesce(delivery.delivery_days, 0) as delivery_days,
        coalesce(delivery.impressions, 0) as impressions,
        coalesce(delivery.clicks, 0) as clicks,
        coalesce(delivery.lifetime_cost, 0) as lifetime_cost,
        coalesce(delivery.lifetime_cost_usd, 0) as lifetime_cost_usd,
        coalesce(delivery.missing_clicks_rows, 0) as missing_clicks_rows

    from ad_groups
    left join campaigns
        on ad_groups.campaign_id = campaigns.campaign_id
    left join child_counts
        on ad_groups.ad_group_id = child_counts.ad_group_id
    left join delivery
        on ad_groups.ad_group_id = delivery.ad_group_id

)

select * from final
