-- One report row per stat_id; (ad_id, stat_date, device) is not unique.
-- Stressor handled: impressions outliers (x1000, bot traffic). A multiple of 1000 whose CTR no
-- longer matches the reported ctr (or that shows no click at all, impossible at >= 1000 clean
-- impressions) is flagged and divided back by 1000; the raw count is kept.
with

source as (

    select * from {{ source('ads', 'ad_daily_stats') }}

),

flagged as (

    select
        *,
        coalesce(
            impressions >= 1000
            and impressions % 1000 = 0
            and (clicks = 0 or round(cast(clicks as double) / impressions, 4) <> ctr),
            false
        ) as is_impressions_outlier

    from source

),

renamed as (

    select
        ---------- ids
        stat_id,
        upper(trim(ad_id)) as ad_id,
        upper(trim(ad_group_id)) as ad_group_id,
        upper(trim(campaign_id)) as campaign_id,
        upper(trim(account_id)) as account_id,

        ---------- attributes
        cast(stat_date as date) as stat_date,
        device,
        upper(trim(currency)) as currency,
        channel_type,

        ---------- numerics (money in the account currency)
        case
            when is_impressions_outlier then impressions // 1000
            else impressions
        end as impressions,
        impressions as impressions_reported,
        clicks,
        ctr,
        round(avg_cpc, 2) as avg_cpc,
        round(cost, 2) as cost,
        conversions,
        round(conversion_value, 2) as conversion_value,
        engagements,

        ---------- data quality flags
        is_impressions_outlier

    from flagged

)

select * from renamed
