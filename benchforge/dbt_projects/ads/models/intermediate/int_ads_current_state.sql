-- The current state of each ad from its (repaired) change history: the current version,
-- the number of versions and changes, and whether the current version agrees with the entity.
with

entities as (

    select * from {{ ref('stg_ads__ads') }}

),

history as (

    select * from {{ ref('stg_ads__ad_history') }}

),

history_with_previous as (

    select
        history.*,
        lag(status) over (partition by ad_id order by version_number) as previous_status,
        lag(approval_status) over (partition by ad_id order by version_number) as previous_approval_status,
        lag(headline_1) over (partition by ad_id order by version_number) as previous_headline_1,
        version_number = 1 as is_first_version

    from history

),

history_summary as (

    select
        ad_id,
        count(*) as version_count,
        min(valid_from) as first_version_at,
        max(valid_from) as last_changed_at,
        count(*) filter (where not is_first_version and status is distinct from previous_status) as status_change_count,
        count(*) filter (
            where not is_first_version and approval_status is distinct from previous_approval_status
        ) as approval_status_change_count,
        count(*) filter (
            where not is_first_version and headline_1 is distinct from previous_headline_1
        ) as headline_1_change_count,
        count(*) filter (where is_duplicate_current_repaired) as repaired_duplicate_current_count

    from history_with_previous
    group by ad_id

),

current_versions as (

    select * from history_with_previous where is_current

),

final as (

    select
        entities.*,

        ---------- current version
        current_versions.ad_history_id as current_ad_history_id,
        current_versions.valid_from as current_version_valid_from,
        current_versions.previous_status,
        current_versions.previous_approval_status,
        current_versions.previous_headline_1,

        ---------- history summary
        coalesce(history_summary.version_count, 0) as version_count,
        history_summary.first_version_at,
        history_summary.last_changed_at,
        coalesce(history_summary.status_change_count, 0) as status_change_count,
        coalesce(history_summary.approval_status_change_count, 0) as approval_status_change_count,
        coalesce(history_summary.headline_1_change_count, 0) as headline_1_change_count,
        coalesce(history_summary.repaired_duplicate_current_count, 0) as repaired_duplicate_current_count,
        coalesce(
            current_versions.status is not distinct from entities.status
            and current_versions.approval_status is not distinct from entities.approval_status
            and current_versions.headline_1 is not distinct from entities.headline_1
            and current_versions.final_url is not distinct from entities.final_url,
            false
        ) as is_history_consistent

    from entities
    left join current_versions
        on entities.ad_id = current_versions.ad_id
    left join history_summary
        on entities.ad_id = history_summary.ad_id

)

select * from final
