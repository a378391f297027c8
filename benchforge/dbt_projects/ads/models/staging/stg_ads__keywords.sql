with

source as (

    select * from {{ source('ads', 'keywords') }}

),

renamed as (

    select
        ---------- ids
        upper(trim(keyword_id)) as keyword_id,
        upper(trim(ad_group_id)) as ad_group_id,
        upper(trim(campaign_id)) as campaign_id,
        upper(trim(account_id)) as account_id,

        ---------- attributes
        keyword_text,
        match_type,
        status,
        upper(trim(currency)) as currency,

        ---------- numerics (money in the account currency)
        round(cpc_bid, 2) as cpc_bid,
        round(first_page_cpc, 2) as first_page_cpc,
        cast(quality_score as integer) as quality_score,

        ---------- timestamps
        cast(created_at as timestamp) as created_at

    from source

)

select * from renamed
