with

snapshots as (

    select * from {{ ref('int_pipeline_snapshots_monthly') }}

),

opportunities as (

    select opportunity_id, account_id, owner_id, opportunity_type, created_at
    from {{ ref('stg_crm__opportunities') }}

),

final as (

    select
        ---------- ids
        snapshots.pipeline_snapshot_id,
        snapshots.opportunity_id,
        snapshots.opportunity_history_id,
        opportunities.account_id,
        opportunities.owner_id,

        ---------- text
        opportunities.opportunity_type,
        snapshots.stage,
        snapshots.forecast_category,
        snapshots.currency,

        ---------- numerics
        snapshots.stage_sort_order,
        snapshots.probability,
        snapshots.version_number,
        snapshots.amount,
        snapshots.expected_revenue,
        snapshots.amount_usd,
        snapshots.expected_revenue_usd,
        snapshots.days_in_stage_at_snapshot,
        date_diff('day', cast(opportunities.created_at as date), snapshots.snapshot_date)
            as opportunity_age_days,

        ---------- dates
        snapshots.snapshot_month,
        snapshots.snapshot_date,
        snapshots.valid_from as stage_entered_at

    from snapshots
    left join opportunities
        on opportunities.opportunity_id = snapshots.opportunity_id

)

select * from final
