-- One report row per stat_id; (keyword_id, stat_date, device) is not unique.
-- Stressors handled:
--   * key drift on keyword_id: upper(trim()).
--   * cost outliers (x50, micros vs units): cost must equal round(clicks x avg_cpc, 2); a row
--     that breaks it is flagged and its cost recomputed (the raw cost is kept).
with

source as (

    select * from {{ source('ads', 'keyword_daily_stats') }}

),

checked as (

    select
        *,
        round(clicks * avg_cpc, 2) as cost_expected

    from source

),

renamed as (

    select
        ---------- ids
        stat_id,
        upper(trim(keyword_id)) as keyword_id,
        upper(trim(ad_group_id)) as ad_group_id,
        upper(trim(campaign_id)) as campaign_id,
        upper(trim(account_id)) as account_id,

        ---------- attributes
        cast(stat_date as date) as stat_date,
        device,
        upper(trim(currency)) as currency,
        match_type,

        ---------- numerics (money in the account currency)
        round(cpc_bid, 2) as cpc_bid,
        cast(quality_score as integer) as quality_score,
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
        top_impression_rate,

        ---------- data quality flags
        keyword_id <> upper(trim(keyword_id)) as is_keyword_id_drifted,
        coalesce(abs(cost - cost_expected) > 0.005, false) as is_cost_outlier

    from checked

)

select * from renamed
