-- One report row per stat_id; (ad_group_id, stat_date, device) is not unique.
-- Stressor handled: blank clicks stay NULL (not imputed) and are flagged.
with

source as (

    select * from {{ source('ads', 'ad_group_daily_stats') }}

),

renamed as (

    select
        ---------- ids
        stat_id,
        upper(trim(ad_group_id)) as ad_group_id,
        upper(trim(campaign_id)) as campaign_id,
        upper(trim(account_id)) as account_id,

        ---------- attributes
        cast(stat_date as date) as stat_date,
        device,
        upper(trim(currency)) as currency,
        channel_type,

        ---------- numerics (money in the account currency)
        round(cpc_bid, 2) as cpc_bid,
        impressions,
        clicks,
        ctr,
        round(avg_cpc, 2) as avg_cpc,
        round(cost, 2) as cost,
        conversions,
        round(conversion_value, 2) as conversion_value,
        round(cost_per_conversion, 2) as cost_per_conversion,

        ---------- data quality flags
        clicks is null as is_clicks_missing

    from source

)

select * from renamed
