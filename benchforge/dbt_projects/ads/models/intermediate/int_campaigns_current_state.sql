-- The current state of each campaign from its (repaired) change history: the current version,
-- the number of versions and changes, and whether the current version agrees with the entity.
with

entities as (

    select * from {{ ref('stg_ads__campaigns') }}

),

history as (

    select * from {{ ref('stg_ads__campaign_history') }}

),

history_with_previous as (

    select
        history.*,
        lag(status) over (partition by campaign_id order by version_number) as previous_status,
        lag(daily_budget) over (partition by campaign_id order by version_number) as previous_daily_budget,
        lag(campaign_name) over (partition by campaign_id order by version_number) as previous_campaign_name,
        lag(bidding_strategy) over (partition by campaign_id order by version_number) as previous_bidding_strategy,
        version_number = 1 as is_first_version

    from history

),

history_summary as (

    select
        campaign_id,
        count(*) as version_count,
        min(valid_from) as first_version_at,
        max(valid_from) as last_changed_at,
        count(*) filter (where not is_first_version and status is distinct from previous_status) as status_change_count,
        count(*) filter (
            where not is_first_version and daily_budget is distinct from previous_daily_budget
        ) as daily_budget_change_count,
        count(*) filter (
            where not is_first_version and campaign_name is distinct from previous_campaign_name
        ) as campaign_name_change_count,
        count(*) filter (
            where not is_first_version and bidding_strategy is distinct from previous_bidding_strategy
        ) as bidding_strategy_change_count,
        count(*) filter (where is_duplicate_current_repaired) as repaired_duplicate_current_count

    from history_with_previous
    group by campaign_id

),

current_versions as (

    select * from history_with_previous where is_current

),

final as (

    select
        entities.*,

        ---------- current version
        current_versions.campaign_history_id as current_campaign_history_id,
        current_versions.valid_from as current_version_valid_from,
        current_versions.previous_status,
        current_versions.previous_daily_budget,
        current_versions.previous_campaign_name,
        current_versions.previous_bidding_strategy,

        ---------- history summary
        coalesce(history_summary.version_count, 0) as version_count,
        history_summary.first_version_at,
        history_summary.last_changed_at,
        coalesce(history_summary.status_change_count, 0) as status_change_count,
        coalesce(history_summary.daily_budget_change_count, 0) as daily_budget_change_count,
        coalesce(history_summary.campaign_name_change_count, 0) as campaign_name_change_count,
        coalesce(history_summary.bidding_strategy_change_count, 0) as bidding_strategy_change_count,
        coalesce(history_summary.repaired_duplicate_current_count, 0) as repaired_duplicate_current_count,
        coalesce(
            current_versions.campaign_name is not distinct from entities.campaign_name
            and current_versions.status is not distinct from entities.status
            and current_versions.daily_budget is not distinct from entities.daily_budget
            and current_versions.bidding_strategy is not distinct from entities.bidding_strategy,
            false
        ) as is_history_consistent

    from entities
    left join current_versions
        on entities.campaign_id = current_versions.campaign_id
    left join history_summary
        on entities.campaign_id = history_summary.campaign_id

)

select * from final
