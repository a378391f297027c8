with

conversions as (

    select * from {{ ref('int_conversions_attributed') }}

),

final as (

    select
        ---------- ids
        conversion_id,
        ad_id,
        ad_group_id,
        campaign_id,
        account_id,
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

        ---------- timestamps (UTC) and account-local dates
        click_at,
        converted_at,
        click_date_local,
        converted_date_local,
        conversion_lag_days,
        conversion_lag_hours,
        attribution_window_days,
        is_within_attribution_window,
        converted_date_local > cast('{{ var("as_of_date") }}' as date) as is_converted_after_as_of_date,

        ---------- money
        conversion_value,
        conversion_value_usd,

        ---------- data quality
        is_ad_id_drifted,
        has_currency_conflict,
        is_converted_at_tz_repaired,
        is_conversion_value_missing

    from conversions

)

select * from final
