-- Stressors handled:
--   * monthly_spend_limit_usd exported as text (`12,345.67`, `950.00 USD`): thousands
--     separators and the unit suffix are stripped before the cast; the raw text is kept.
--   * created_at written in the account's local time: recognisable when it falls after the
--     creation of the account's first campaign (impossible in clean data: campaigns are created
--     after their account). Those rows are shifted back by the account's UTC offset.
--     A shift that keeps the account before its first campaign cannot be recognised.
with

source as (

    select * from {{ source('ads', 'ad_accounts') }}

),

first_campaigns as (

    select
        account_id,
        min(created_at) as first_campaign_created_at

    from {{ ref('stg_ads__campaigns') }}
    group by account_id

),

parsed as (

    select
        source.*,
        try_cast(
            replace(regexp_replace(trim(source.monthly_spend_limit_usd), '\s*USD$', ''), ',', '')
            as double
        ) as spend_limit_parsed,
        to_seconds(cast(round(source.utc_offset_hours * 3600) as bigint)) as utc_offset,
        first_campaigns.first_campaign_created_at,
        coalesce(
            source.utc_offset_hours > 0
            and source.created_at > first_campaigns.first_campaign_created_at,
            false
        ) as is_created_at_local_time

    from source
    left join first_campaigns
        on upper(trim(source.account_id)) = first_campaigns.account_id

),

renamed as (

    select
        ---------- ids
        upper(trim(account_id)) as account_id,
        upper(trim(manager_id)) as agency_id,

        ---------- attributes
        account_name,
        upper(trim(country)) as country,
        locale,
        upper(trim(currency)) as currency,
        timezone,
        account_type,
        vertical,
        account_status,
        billing_method,
        auto_tagging_enabled,

        ---------- numerics
        cast(utc_offset_hours as double) as utc_offset_hours,
        round(spend_limit_parsed, 2) as monthly_spend_limit_usd,
        monthly_spend_limit_usd as monthly_spend_limit_usd_raw,

        ---------- timestamps (UTC)
        case
            when is_created_at_local_time then created_at - utc_offset
            else created_at
        end as created_at,
        created_at as created_at_raw,

        ---------- data quality flags
        monthly_spend_limit_usd is not null
        and try_cast(monthly_spend_limit_usd as double) is null as is_spend_limit_text_formatted,
        is_created_at_local_time as is_created_at_tz_repaired

    from parsed

)

select * from renamed
