-- Stressors handled:
--   * key drift on ad_id: upper(trim()).
--   * currency conflicts: the value is in the account currency, so the currency is taken from
--     the parent ad; the reported label is kept and the conflict flagged.
--   * converted_at written in the account's local time: in clean data converted_at >= click_at
--     and conversion_lag_days = date_diff('day', click_at, converted_at). A row that breaks
--     either rule, and satisfies both once shifted back by its country's UTC offset, is
--     converted back to UTC. Shifts that break neither rule cannot be recognised and stay.
--   * blank conversion_value stays NULL and is flagged.
-- Attribution windows (measurement policy): a click-through conversion is credited to the ad
-- if it happens within 7 days of the click for PURCHASE and LEAD, 3 days for SIGNUP,
-- ADD_TO_CART and APP_INSTALL, and 1 day for PHONE_CALL; a view-through conversion within 1 day.
with

source as (

    select * from {{ source('ads', 'conversions') }}

),

ads as (

    select * from {{ ref('stg_ads__ads') }}

),

countries as (

    select * from {{ ref('stg_ads__countries') }}

),

joined as (

    select
        source.*,
        upper(trim(source.ad_id)) as ad_id_clean,
        ads.currency as ad_currency,
        source.converted_at
        - to_seconds(cast(round(coalesce(countries.utc_offset_hours, 0) * 3600) as bigint))
            as converted_at_shifted_back

    from source
    left join ads
        on upper(trim(source.ad_id)) = ads.ad_id
    left join countries
        on upper(trim(source.country)) = countries.country

),

checked as (

    select
        *,
        coalesce(
            (
                converted_at < click_at
                or date_diff('day', click_at, converted_at) <> conversion_lag_days
            )
            and converted_at_shifted_back <> converted_at
            and converted_at_shifted_back >= click_at
            and date_diff('day', click_at, converted_at_shifted_back) = conversion_lag_days,
            false
        ) as is_converted_at_local_time

    from joined

),

renamed as (

    select
        ---------- ids
        conversion_id,
        ad_id_clean as ad_id,
        upper(trim(ad_group_id)) as ad_group_id,
        upper(trim(campaign_id)) as campaign_id,
        upper(trim(account_id)) as account_id,
        gclid,
        order_id,

        ---------- attributes
        upper(trim(country)) as country,
        coalesce(ad_currency, upper(trim(currency))) as currency,
        currency as currency_reported,
        conversion_action,
        device,
        attribution_model,
        is_view_through,

        ---------- numerics (money in the account currency)
        conversion_lag_days,
        round(conversion_value, 2) as conversion_value,
        case
            when is_view_through then 1
            when conversion_action in ('PURCHASE', 'LEAD') then 7
            when conversion_action in ('SIGNUP', 'ADD_TO_CART', 'APP_INSTALL') then 3
            when conversion_action = 'PHONE_CALL' then 1
        end as attribution_window_days,

        ---------- timestamps (UTC)
        cast(click_at as timestamp) as click_at,
        case
            when is_converted_at_local_time then converted_at_shifted_back
            else converted_at
        end as converted_at,
        converted_at as converted_at_raw,

        ---------- data quality flags
        ad_id <> ad_id_clean as is_ad_id_drifted,
        coalesce(upper(trim(currency)) <> ad_currency, false) as has_currency_conflict,
        is_converted_at_local_time as is_converted_at_tz_repaired,
        conversion_value is null as is_conversion_value_missing

    from checked

)

select * from renamed
