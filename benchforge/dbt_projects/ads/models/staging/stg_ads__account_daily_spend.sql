-- Published upstream from the clean campaign stats (before stressors): used to reconcile.
with

source as (

    select * from {{ source('ads', 'account_daily_spend') }}

),

renamed as (

    select
        ---------- ids
        account_day_id,
        upper(trim(account_id)) as account_id,

        ---------- attributes
        cast(stat_date as date) as stat_date,
        upper(trim(currency)) as currency,

        ---------- numerics (money in the account currency)
        active_campaigns,
        impressions,
        clicks,
        round(cost, 2) as cost,
        conversions,
        round(conversion_value, 2) as conversion_value

    from source

)

select * from renamed
