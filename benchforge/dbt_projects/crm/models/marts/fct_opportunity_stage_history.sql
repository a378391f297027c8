with

versions as (

    select * from {{ ref('int_opportunity_stages_sequenced') }}

),

opportunities as (

    select opportunity_id, account_id, owner_id from {{ ref('stg_crm__opportunities') }}

),

final as (

    select
        ---------- ids
        versions.opportunity_history_id,
        versions.opportunity_id,
        opportunities.account_id,
        opportunities.owner_id,
        versions.last_modified_by_id,

        ---------- text
        versions.stage,
        versions.previous_stage,
        versions.next_stage,
        versions.forecast_category,
        versions.currency,

        ---------- numerics
        versions.version_number,
        versions.version_count,
        versions.stage_sort_order,
        versions.probability,
        versions.amount,
        versions.expected_revenue,
        versions.amount_usd,
        versions.expected_revenue_usd,
        versions.duration_days,

        ---------- booleans
        versions.is_current,
        versions.is_first_version,
        versions.is_stage_advance,
        versions.is_stage_regression,
        versions.is_after_as_of,
        versions.is_duplicate_current_fixed,

        ---------- timestamps
        versions.valid_from,
        versions.valid_to

    from versions
    left join opportunities
        on opportunities.opportunity_id = versions.opportunity_id

)

select * from final
