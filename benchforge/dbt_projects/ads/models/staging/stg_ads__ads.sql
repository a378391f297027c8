-- Stressors handled: key drift on ad_group_id (trailing space / lower-cased) is repaired with
-- upper(trim()); blank headline_2 values stay NULL and are flagged.
with

source as (

    select * from {{ source('ads', 'ads') }}

),

renamed as (

    select
        ---------- ids
        upper(trim(ad_id)) as ad_id,
        upper(trim(ad_group_id)) as ad_group_id,
        upper(trim(campaign_id)) as campaign_id,
        upper(trim(account_id)) as account_id,

        ---------- attributes
        ad_type,
        upper(trim(country)) as country,
        upper(trim(currency)) as currency,
        channel_type,
        headline_1,
        headline_2,
        description,
        final_url,
        display_path,
        status,
        approval_status,

        ---------- timestamps
        cast(created_at as timestamp) as created_at,

        ---------- data quality flags
        ad_group_id <> upper(trim(ad_group_id)) as is_ad_group_id_drifted,
        headline_2 is null as is_headline_2_missing

    from source

)

select * from renamed
