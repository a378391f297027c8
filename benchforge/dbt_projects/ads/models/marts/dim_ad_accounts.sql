with

accounts as (

    select * from {{ ref('stg_ads__ad_accounts') }}

),

countries as (

    select * from {{ ref('stg_ads__countries') }}

),

agencies as (

    select * from {{ ref('stg_ads__agencies') }}

),

campaigns as (

    select
        account_id,
        count(*) as campaigns,
        count(*) filter (where status = 'ENABLED') as enabled_campaigns,
        min(created_at) as first_campaign_created_at

    from {{ ref('stg_ads__campaigns') }}
    group by account_id

),

spend as (

    select
        account_id,
        min(stat_date) as first_delivery_date,
        max(stat_date) as last_delivery_date,
        count(*) as delivery_days,
        {{ sum_exact('cost') }} as lifetime_cost,
        {{ sum_exact('cost_usd') }} as lifetime_cost_usd,
        {{ sum_exact('conversion_value') }} as lifetime_reported_conversion_value

    from {{ ref('int_account_spend_daily') }}
    group by account_id

),

conversion_events as (

    select
        account_id,
        count(*) as conversion_events,
        {{ sum_exact('conversion_value_usd') }} as conversion_event_value_usd

    from {{ ref('int_conversions_attributed') }}
    group by account_id

),

final as (

    select
        ---------- ids
        accounts.account_id,
        accounts.agency_id,

        ---------- attributes
        accounts.account_name,
        accounts.country,
        countries.country_name,
        accounts.locale,
        accounts.currency,
        accounts.timezone,
        accounts.utc_offset_hours,
        accounts.account_type,
        agencies.agency_name,
        agencies.partner_tier as agency_partner_tier,
        accounts.vertical,
        accounts.account_status,
        accounts.billing_method,
        accounts.auto_tagging_enabled,
        accounts.monthly_spend_limit_usd,

        ---------- timestamps
        accounts.created_at,
        cast(accounts.created_at as date) as signup_date,
        date_diff('day', cast(accounts.created_at as date), cast('{{ var("as_of_date") }}' as date)) as tenure_days,

        ---------- campaigns and delivery
        coalesce(campaigns.campaigns, 0) as campaigns,
        coalesce(campaigns.enabled_campaigns, 0) as enabled_campaigns,
        campaigns.first_campaign_created_at,
        spend.first_delivery_date,
        spend.last_delivery_date,
        coalesce(spend.delivery_days, 0) as delivery_days,
        coalesce(spend.lifetime_cost, 0) as lifetime_cost,
        coalesce(spend.lifetime_cost_usd, 0) as lifetime_cost_usd,
        coalesce(spend.lifetime_reported_conversion_value, 0) as lifetime_reported_conversion_value,
        coalesce(conversion_events.conversion_events, 0) as conversion_events,
        coalesce(conversion_events.conversion_event_value_usd, 0) as conversion_event_value_usd,
        date_diff('day', spend.last_delivery_date, cast('{{ var("as_of_date") }}' as date)) as days_since_last_delivery,

        ---------- data quality
        accounts.is_spend_limit_text_formatted,
        accounts.is_created_at_tz_repaired

    from accounts
    left join countries
        on accounts.country = countries.country
    left join agencies
        on accounts.agency_id = agencies.agency_id
    left join campaigns
        on accounts.account_id = campaigns.account_id
    left join spend
        on accounts.account_id = spend.account_id
    left join conversion_events
        on accounts.account_id = conversion_events.account_id

)

select * from final
