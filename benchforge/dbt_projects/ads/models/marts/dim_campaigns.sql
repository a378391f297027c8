with

campaigns as (

    select * from {{ ref('int_campaigns_current_state') }}

),

accounts as (

    select * from {{ ref('stg_ads__ad_accounts') }}

),

ad_groups as (

    select
        campaign_id,
        count(*) as ad_groups,
        count(*) filter (where status = 'ENABLED') as enabled_ad_groups

    from {{ ref('stg_ads__ad_groups') }}
    group by campaign_id

),

delivery as (

    select
        campaign_id,
        min(stat_date) as first_delivery_date,
        max(stat_date) as last_delivery_date,
        count(*) as delivery_days,
        cast(sum(impressions) as bigint) as impressions,
        cast(sum(clicks) as bigint) as clicks,
        cast(sum(conversions) as bigint) as reported_conversions,
        {{ sum_exact('cost') }} as lifetime_cost,
        {{ sum_exact('cost_usd') }} as lifetime_cost_usd,
        {{ sum_exact('conversion_value') }} as lifetime_reported_conversion_value

    from {{ ref('int_campaign_stats_daily') }}
    group by campaign_id

),

conversion_events as (

    select
        campaign_id,
        count(*) as conversion_events,
        {{ sum_exact('conversion_value') }} as conversion_event_value,
        {{ sum_exact('conversion_value_usd') }} as conversion_event_value_usd

    from {{ ref('int_conversions_attributed') }}
    group by campaign_id

),

final as (

    select
        ---------- ids
        campaigns.campaign_id,
        campaigns.account_id,
        campaigns.current_campaign_history_id,

        ---------- attributes
        campaigns.campaign_name,
        campaigns.country,
        campaigns.currency,
        accounts.account_name,
        campaigns.channel_type,
        campaigns.objective,
        campaigns.bidding_strategy,
        campaigns.status,
        campaigns.budget_delivery,
        campaigns.search_partners_enabled,

        ---------- money (account currency)
        campaigns.daily_budget,
        campaigns.previous_daily_budget,
        campaigns.target_cpa,
        campaigns.target_roas,

        ---------- timestamps
        campaigns.created_at,
        campaigns.start_date,
        date_diff('day', campaigns.start_date, cast('{{ var("as_of_date") }}' as date)) as days_since_start,

        ---------- change history
        campaigns.version_count,
        campaigns.last_changed_at,
        campaigns.status_change_count,
        campaigns.daily_budget_change_count,
        campaigns.campaign_name_change_count,
        campaigns.bidding_strategy_change_count,
        campaigns.repaired_duplicate_current_count,

        ---------- structure and delivery
        coalesce(ad_groups.ad_groups, 0) as ad_groups,
        coalesce(ad_groups.enabled_ad_groups, 0) as enabled_ad_groups,
        delivery.first_delivery_date,
        delivery.last_delivery_date,
        coalesce(delivery.delivery_days, 0) as delivery_days,
        coalesce(delivery.impressions, 0) as impressions,
        coalesce(delivery.clicks, 0) as clicks,
        coalesce(delivery.reported_conversions, 0) as reported_conversions,
        coalesce(delivery.lifetime_cost, 0) as lifetime_cost,
        coalesce(delivery.lifetime_cost_usd, 0) as lifetime_cost_usd,
        coalesce(delivery.lifetime_reported_conversion_value, 0) as lifetime_reported_conversion_value,
        round(delivery.lifetime_reported_conversion_value / nullif(delivery.lifetime_cost, 0), 4) as lifetime_roas,
        coalesce(conversion_events.conversion_events, 0) as conversion_events,
        coalesce(conversion_events.conversion_event_value, 0) as conversion_event_value,
        coalesce(conversion_events.conversion_event_value_usd, 0) as conversion_event_value_usd

    from campaigns
    left join accounts
        on campaigns.account_id = accounts.account_id
    left join ad_groups
        on campaigns.campaign_id = ad_groups.campaign_id
    left join delivery
        on campaigns.campaign_id = delivery.campaign_id
    left join conversion_events
        on campaigns.campaign_id = conversion_events.campaign_id

)

select * from final
