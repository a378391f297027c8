with

source as (

    select * from {{ source('ads', 'campaigns') }}

),

renamed as (

    select
        ---------- ids
        upper(trim(campaign_id)) as campaign_id,
        upper(trim(account_id)) as account_id,

        ---------- attributes
        campaign_name,
        upper(trim(country)) as country,
        upper(trim(currency)) as currency,
        timezone,
        channel_type,
        objective,
        bidding_strategy,
        status,
        budget_delivery,
        search_partners_enabled,

        ---------- numerics (money in the account currency)
        round(daily_budget, 2) as daily_budget,
        round(target_cpa, 2) as target_cpa,
        round(target_roas, 2) as target_roas,

        ---------- timestamps
        cast(created_at as timestamp) as created_at,
        cast(start_date as date) as start_date

    from source

)

select * from renamed
