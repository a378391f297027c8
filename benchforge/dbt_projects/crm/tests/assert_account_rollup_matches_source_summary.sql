-- The per-account rollup rebuilt from the cleaned facts reconciles with the source system's
-- account_activity_summary (computed from the clean data before the stressors). This checks the
-- key-drift, time-zone and missing-account repairs end to end. Won amounts are compared only on
-- accounts without a flagged amount outlier (the rollup leaves outliers out), with a tolerance of
-- half a cent per won deal for the source's unrounded per-deal conversion.
select
    rolled.account_id

from {{ ref('int_account_activity_rolled_up') }} as rolled
inner join {{ ref('stg_crm__account_activity_summary') }} as summary
    on summary.account_id = rolled.account_id
where rolled.contact_count <> summary.contact_count
    or rolled.open_opportunity_count <> summary.open_opportunity_count
    or rolled.won_opportunity_count <> summary.won_opportunity_count
    or rolled.task_count <> summary.task_count
    or rolled.event_count <> summary.event_count
    or rolled.case_count <> summary.case_count
    or rolled.open_case_count <> summary.open_case_count
    or rolled.last_activity_at is distinct from summary.last_activity_at
    or (
        rolled.amount_outlier_count = 0
        and abs(rolled.won_amount_usd - summary.won_amount_usd)
            > 0.01 + 0.005 * rolled.won_opportunity_count
    )
    or (
        rolled.amount_outlier_count = 0
        and abs(rolled.open_pipeline_usd - summary.open_pipeline_usd)
            > 0.01 + 0.005 * rolled.open_opportunity_count
    )
