-- Stressor handled: duplicate "current" versions. The previous version of some ad groups was
-- left open (is_current = true, valid_to NULL). The version chain is rebuilt from valid_from:
-- each version is valid until the next one starts, and only the latest version (by valid_from)
-- is current. Every history row is kept.
with

source as (

    select * from {{ source('ads', 'ad_group_history') }}

),

sequenced as (

    select
        *,
        lead(valid_from) over (
            partition by upper(trim(ad_group_id))
            order by valid_from, ad_group_history_id
        ) as next_valid_from,
        row_number() over (
            partition by upper(trim(ad_group_id))
            order by valid_from, ad_group_history_id
        ) as version_number

    from source

),

renamed as (

    select
        ---------- ids
        ad_group_history_id,
        upper(trim(ad_group_id)) as ad_group_id,

        ---------- attributes
        upper(trim(currency)) as currency,
        ad_group_name,
        status,
        round(cpc_bid, 2) as cpc_bid,
        change_source,

        ---------- validity (UTC)
        version_number,
        cast(valid_from as timestamp) as valid_from,
        cast(next_valid_from as timestamp) as valid_to,
        next_valid_from is null as is_current,

        ---------- data quality flags
        coalesce(is_current, false) and next_valid_from is not null as is_duplicate_current_repaired

    from sequenced

)

select * from renamed
