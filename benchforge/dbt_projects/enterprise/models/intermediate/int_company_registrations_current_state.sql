-- The current registration of each company from its (repaired) history: the current version,
-- the number of versions and of name / capital / representative / listing changes.
with

history as (

    select * from {{ ref('stg_enterprise__company_profile_history') }}

),

history_with_previous as (

    select
        history.*,
        lag(company_name) over (partition by company_id order by version_number) as previous_company_name,
        lag(registered_capital_wan_cny) over (partition by company_id order by version_number)
            as previous_registered_capital_wan_cny,
        lag(legal_representative) over (partition by company_id order by version_number)
            as previous_legal_representative,
        lag(listing_status) over (partition by company_id order by version_number) as previous_listing_status

    from history

),

summary as (

    select
        company_id,
        count(*) as registration_versions,
        min(valid_from) as first_registered_at,
        max(valid_from) as last_changed_at,
        count(*) filter (
            where version_number > 1 and company_name is distinct from previous_company_name
        ) as name_changes,
        count(*) filter (
            where version_number > 1 and registered_capital_wan_cny is distinct from previous_registered_capital_wan_cny
        ) as capital_changes,
        count(*) filter (
            where version_number > 1 and legal_representative is distinct from previous_legal_representative
        ) as representative_changes,
        count(*) filter (
            where version_number > 1 and listing_status is distinct from previous_listing_status
        ) as listing_changes,
        count(*) filter (where is_duplicate_current_repaired) as repaired_duplicate_current_count

    from history_with_previous
    group by company_id

),

current_versions as (

    select * from history_with_previous where is_current

),

final as (

    select
        ---------- ids
        summary.company_id,
        current_versions.change_id as current_change_id,

        ---------- current registration
        current_versions.company_name as registered_name,
        current_versions.legal_representative as registered_legal_representative,
        current_versions.registered_capital_wan_cny,
        current_versions.listing_status as registered_listing_status,
        current_versions.change_type as last_change_type,
        current_versions.approved_by as last_approved_by,
        current_versions.valid_from as current_since,
        current_versions.previous_company_name,
        current_versions.previous_registered_capital_wan_cny,

        ---------- history summary
        summary.registration_versions,
        summary.first_registered_at,
        summary.last_changed_at,
        summary.name_changes,
        summary.capital_changes,
        summary.representative_changes,
        summary.listing_changes,
        summary.repaired_duplicate_current_count

    from summary
    left join current_versions
        on summary.company_id = current_versions.company_id

)

select * from final
