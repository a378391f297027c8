-- duplicate_current repaired: every opportunity has exactly one current stage-history version,
-- and it carries the opportunity's stage.
select
    opportunities.opportunity_id,
    count(history.opportunity_history_id) as current_versions,
    min(history.stage) as current_stage,
    min(opportunities.stage) as opportunity_stage

from {{ ref('stg_crm__opportunities') }} as opportunities
left join {{ ref('stg_crm__opportunity_stage_history') }} as history
    on history.opportunity_id = opportunities.opportunity_id
    and history.is_current
group by opportunities.opportunity_id
having count(history.opportunity_history_id) <> 1
    or min(history.stage) <> min(opportunities.stage)
