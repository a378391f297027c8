with

source as (

    select * from {{ source('ads', 'ad_groups') }}

),

renamed as (

    select
        ---------- ids
        upper(trim(ad_group_id)) as ad_group_id,
        upper(trim(campaign_id)) as campaign_id,
        upper(trim(account_id)) as account_id,

        ---------- attributes
        ad_group_name,
        ad_group_type,
        upper(trim(country)) as country,
        upper(trim(currency)) as currency,
        channel_type,
        status,
        audience_targeting,

        ---------- numerics (money in the account currency)
        round(cpc_bid, 2) as cpc_bid,

        ---------- timestamps
        cast(created_at as timestamp) as created_at

    from source

)

select * from renamed
