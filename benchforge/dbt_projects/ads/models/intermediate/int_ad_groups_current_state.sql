-- The current state of each ad group from its (repaired) change history: the current version,
-- the number of versions and changes, and whether the current version agrees with the entity.
with

entities as (

    select * from {{ ref('stg_ads__ad_groups') }}

),

history as (

    select * from {{ ref('stg_ads__ad_group_history') }}

),

history_with_previous as (

    select
        history.*,
        lag(status) over (partition by ad_group_id order by version_number) as previous_status,
        lag(cpc_bid) over (partition by ad_group_id order by version_number) as previous_cpc_bid,
        lag(ad_group_name) over (partition by ad_group_id order by version_number) as previous_ad_group_name,
        version_number = 1 as is_first_version

    from history

),

history_summary as (

    select
        ad_group_id,
        count(*) as version_count,
        min(valid_from) as first_version_at,
        max(valid_from) as last_changed_at,
        count(*) filter (where not is_first_version and status is distinct from previous_status) as status_change_count,
        count(*) filter (
            where not is_first_version and cpc_bid is distinct from previous_cpc_bid
        ) as cpc_bid_change_count,
        count(*) filter (
            where not is_first_version and ad_group_name is distinct from previous_ad_group_name
        ) as ad_group_name_change_count,
        count(*) filter (where is_duplicate_current_repaired) as repaired_duplicate_current_count

    from history_with_previous
    group by ad_group_id

),

current_versions as (

    select * from history_with_previous where is_current

),

final as (

    select
        entities.*,

        ---------- current version
        current_versions.ad_group_history_id as current_ad_group_history_id,
        current_versions.valid_from as current_version_valid_from,
        current_versions.previous_status,
        current_versions.previous_cpc_bid,
        current_versions.previous_ad_group_name,

        ---------- history summary
        coalesce(history_summary.version_count, 0) as version_count,
        history_summary.first_version_at,
        history_summary.last_changed_at,
        coalesce(history_summary.status_change_count, 0) as status_change_count,
        coalesce(history_summary.cpc_bid_change_count, 0) as cpc_bid_change_count,
        coalesce(history_summary.ad_group_name_change_count, 0) as ad_group_name_change_count,
        coalesce(history_summary.repaired_duplicate_current_count, 0) as repaired_duplicate_current_count,
        coalesce(
            current_versions.ad_group_name is not distinct from entities.ad_group_name
            and current_versions.status is not distinct from entities.status
            and current_versions.cpc_bid is not distinct from entities.cpc_bid,
            false
        ) as is_history_consistent

    from entities
    left join current_versions
        on entities.ad_group_id = current_versions.ad_group_id
    left join history_summary
        on entities.ad_group_id = history_summary.ad_group_id

)

select * from final
