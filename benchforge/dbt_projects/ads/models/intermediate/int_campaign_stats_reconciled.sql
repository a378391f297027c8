-- The four delivery grains rolled up to campaign x day side by side. The grains are generated
-- independently upstream, so they do not have to agree: this model measures by how much they
-- differ (one row for every campaign-day reported at any grain).
with

campaign_grain as (

    select
        campaign_id,
        stat_date,
        impressions,
        clicks,
        cost

    from {{ ref('int_campaign_stats_daily') }}

),

ad_group_grain as (

    select
        campaign_id,
        stat_date,
        cast(sum(impressions) as bigint) as impressions,
        cast(sum(clicks) as bigint) as clicks,
        {{ sum_exact('cost') }} as cost

    from {{ ref('int_ad_group_stats_daily') }}
    group by campaign_id, stat_date

),

ad_grain as (

    select
        campaign_id,
        stat_date,
        cast(sum(impressions) as bigint) as impressions,
        cast(sum(clicks) as bigint) as clicks,
        {{ sum_exact('cost') }} as cost

    from {{ ref('int_ad_stats_daily') }}
    group by campaign_id, stat_date

),

keyword_grain as (

    select
        campaign_id,
        stat_date,
        cast(sum(impressions) as bigint) as impressions,
        cast(sum(clicks) as bigint) as clicks,
        {{ sum_exact('cost') }} as cost

    from {{ ref('int_keyword_stats_daily') }}
    group by campaign_id, stat_date

),

campaign_days as (

    select campaign_id, stat_date from campaign_grain
    union
    select campaign_id, stat_date from ad_group_grain
    union
    select campaign_id, stat_date from ad_grain
    union
    select campaign_id, stat_date from keyword_grain

),

final as (

    select
        ---------- ids
        campaign_days.campaign_id || ':' || strftime(campaign_days.stat_date, '%Y-%m-%d') as campaign_day_id,
        campaign_days.campaign_id,
        campaign_days.stat_date,

        ---------- campaign grain
        campaign_grain.impressions as campaign_impressions,
        campaign_grain.clicks as campaign_clicks,
        campaign_grain.cost as campaign_cost,

        ---------- ad group grain
        ad_group_grain.impressions as ad_group_impressions,
        ad_group_grain.clicks as ad_group_clicks,
        ad_group_grain.cost as ad_group_cost,

        ---------- ad grain
        ad_grain.impressions as ad_impressions,
        ad_grain.clicks as ad_clicks,
        ad_grain.cost as ad_cost,

        ---------- keyword grain
        keyword_grain.impressions as keyword_impressions,
        keyword_grain.clicks as keyword_clicks,
        keyword_grain.cost as keyword_cost,

        ---------- reconciliation
        cast(
            cast(campaign_grain.campaign_id is not null as integer)
            + cast(ad_group_grain.campaign_id is not null as integer)
            + cast(ad_grain.campaign_id is not null as integer)
            + cast(keyword_grain.campaign_id is not null as integer)
            as integer
        ) as grains_reported,
        round(ad_group_grain.cost - campaign_grain.cost, 2) as ad_group_cost_gap,
        round(ad_grain.cost - campaign_grain.cost, 2) as ad_cost_gap,
        round(keyword_grain.cost - campaign_grain.cost, 2) as keyword_cost_gap

    from campaign_days
    left join campaign_grain
        on campaign_days.campaign_id = campaign_grain.campaign_id
        and campaign_days.stat_date = campaign_grain.stat_date
    left join ad_group_grain
        on campaign_days.campaign_id = ad_group_grain.campaign_id
        and campaign_days.stat_date = ad_group_grain.stat_date
    left join ad_grain
        on campaign_days.campaign_id = ad_grain.campaign_id
        and campaign_days.stat_date = ad_grain.stat_date
    left join keyword_grain
        on campaign_days.campaign_id = keyword_grain.campaign_id
        and campaign_days.stat_date = keyword_grain.stat_date

)

select * from final
