-- One report row per stat_id; (campaign_id, stat_date) is not unique (see the domain README).
-- Stressors handled:
--   * key drift on campaign_id: upper(trim()).
--   * currency conflicts: money is always in the account currency, so the currency is taken
--     from the parent campaign; the reported label is kept and the conflict flagged.
--   * cost outliers (x100 billing glitches): cost must equal round(clicks x avg_cpc, 2); a row
--     that breaks it is flagged and its cost recomputed from clicks and avg_cpc (the raw cost is
--     kept in cost_reported).
--   * blank conversions stay NULL (cost_per_conversion still tells they were > 0) and are flagged.
with

source as (

    select * from {{ source('ads', 'campaign_daily_stats') }}

),

campaigns as (

    select * from {{ ref('stg_ads__campaigns') }}

),

joined as (

    select
        source.*,
        upper(trim(source.campaign_id)) as campaign_id_clean,
        campaigns.currency as campaign_currency,
        round(source.clicks * source.avg_cpc, 2) as cost_expected

    from source
    left join campaigns
        on upper(trim(source.campaign_id)) = campaigns.campaign_id

),

renamed as (

    select
        ---------- ids
        stat_id,
        campaign_id_clean as campaign_id,
        upper(trim(account_id)) as account_id,

        ---------- attributes
        cast(stat_date as date) as stat_date,
        channel_type,
        coalesce(campaign_currency, upper(trim(currency))) as currency,
        currency as currency_reported,

        ---------- numerics (money in the account currency)
        round(daily_budget, 2) as daily_budget,
        impressions,
        clicks,
        ctr,
        round(avg_cpc, 2) as avg_cpc,
        case
            when abs(cost - cost_expected) > 0.005 then cost_expected
            else round(cost, 2)
        end as cost,
        cost as cost_reported,
        conversions,
        round(conversion_value, 2) as conversion_value,
        round(cost_per_conversion, 2) as cost_per_conversion,
        video_views,
        search_impression_share,

        ---------- data quality flags
        campaign_id <> campaign_id_clean as is_campaign_id_drifted,
        coalesce(upper(trim(currency)) <> campaign_currency, false) as has_currency_conflict,
        coalesce(abs(cost - cost_expected) > 0.005, false) as is_cost_outlier,
        conversions is null as is_conversions_missing

    from joined

)

select * from renamed
