-- Each conversion attributed to its ad, ad group, campaign and account through the (repaired)
-- ad key, with the account's local click and conversion dates and its value normalised to USD.
-- A conversion is attributable when its (UTC, repaired) converted_at is at most
-- attribution_window_days after the click; later ones are kept and flagged.
with

conversions as (

    select * from {{ ref('stg_ads__conversions') }}

),

ads as (

    select * from {{ ref('stg_ads__ads') }}

),

campaigns as (

    select * from {{ ref('stg_ads__campaigns') }}

),

accounts as (

    select * from {{ ref('stg_ads__ad_accounts') }}

),

rates as (

    select * from {{ ref('int_currency_rates_pinned') }}

),

joined as (

    select
        conversions.*,
        ads.ad_group_id as ad_ad_group_id,
        ads.campaign_id as ad_campaign_id,
        ads.account_id as ad_account_id,
        ads.ad_type,
        ads.created_at as ad_created_at,
        campaigns.channel_type,
        campaigns.objective,
        accounts.timezone,
        to_seconds(cast(round(accounts.utc_offset_hours * 3600) as bigint)) as utc_offset,
        rates.units_per_usd

    from conversions
    left join ads
        on conversions.ad_id = ads.ad_id
    left join campaigns
        on ads.campaign_id = campaigns.campaign_id
    left join accounts
        on ads.account_id = accounts.account_id
    left join rates
        on conversions.currency = rates.currency

),

final as (

    select
        ---------- ids
        conversion_id,
        ad_id,
        ad_ad_group_id as ad_group_id,
        ad_campaign_id as campaign_id,
        ad_account_id as account_id,
        gclid,
        order_id,

        ---------- attributes
        conversion_action,
        device,
        attribution_model,
        is_view_through,
        ad_type,
        channel_type,
        objective,
        currency,
        timezone,

        ---------- timestamps (UTC) and account-local dates
        click_at,
        converted_at,
        cast(click_at + utc_offset as date) as click_date_local,
        cast(converted_at + utc_offset as date) as converted_date_local,
        conversion_lag_days,
        round(date_diff('second', click_at, converted_at) / 3600.0, 2) as conversion_lag_hours,

        ---------- attribution window
        attribution_window_days,
        converted_at <= click_at + to_days(attribution_window_days) as is_within_attribution_window,

        ---------- money
        conversion_value,
        round(conversion_value / units_per_usd, 2) as conversion_value_usd,

        ---------- data quality
        coalesce(
            ad_group_id = ad_ad_group_id
            and campaign_id = ad_campaign_id
            and account_id = ad_account_id,
            false
        ) as is_hierarchy_consistent,
        click_at >= ad_created_at as is_click_after_ad_creation,
        is_ad_id_drifted,
        has_currency_conflict,
        is_converted_at_tz_repaired,
        is_conversion_value_missing

    from joined

)

select * from final
