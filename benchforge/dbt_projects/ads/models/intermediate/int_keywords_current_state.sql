-- The current state of each keyword from its (repaired) change history: the current version,
-- the number of versions and changes, and whether the current version agrees with the entity.
with

entities as (

    select * from {{ ref('stg_ads__keywords') }}

),

history as (

    select * from {{ ref('stg_ads__keyword_history') }}

),

history_with_previous as (

    select
        history.*,
        lag(status) over (partition by keyword_id order by version_number) as previous_status,
        lag(cpc_bid) over (partition by keyword_id order by version_number) as previous_cpc_bid,
        lag(quality_score) over (partition by keyword_id order by version_number) as previous_quality_score,
        version_number = 1 as is_first_version

    from history

),

history_summary as (

    select
        keyword_id,
        count(*) as version_count,
        min(valid_from) as first_version_at,
        max(valid_from) as last_changed_at,
        count(*) filter (where not is_first_version and status is distinct from previous_status) as status_change_count,
        count(*) filter (
            where not is_first_version and cpc_bid is distinct from previous_cpc_bid
        ) as cpc_bid_change_count,
        count(*) filter (
            where not is_first_version and quality_score is distinct from previous_quality_score
        ) as quality_score_change_count,
        count(*) filter (where is_duplicate_current_repaired) as repaired_duplicate_current_count

    from history_with_previous
    group by keyword_id

),

current_versions as (

    select * from history_with_previous where is_current

),

final as (

    select
        entities.*,

        ---------- current version
        current_versions.keyword_history_id as current_keyword_history_id,
        current_versions.valid_from as current_version_valid_from,
        current_versions.previous_status,
        current_versions.previous_cpc_bid,
        current_versions.previous_quality_score,

        ---------- history summary
        coalesce(history_summary.version_count, 0) as version_count,
        history_summary.first_version_at,
        history_summary.last_changed_at,
        coalesce(history_summary.status_change_count, 0) as status_change_count,
        coalesce(history_summary.cpc_bid_change_count, 0) as cpc_bid_change_count,
        coalesce(history_summary.quality_score_change_count, 0) as quality_score_change_count,
        coalesce(history_summary.repaired_duplicate_current_count, 0) as repaired_duplicate_current_count,
        coalesce(
            current_versions.status is not distinct from entities.status
            and current_versions.cpc_bid is not distinct from entities.cpc_bid
            and current_versions.quality_score is not distinct from entities.quality_score,
            false
        ) as is_history_consistent

    from entities
    left join current_versions
        on entities.keyword_id = current_versions.keyword_id
    left join history_summary
        on entities.keyword_id = history_summary.keyword_id

)

select * from final
