-- currency_conflict resolved: the opportunity's resolved currency equals the currency on every
-- stage-history version and on every line item.
select
    opportunities.opportunity_id,
    'stage_history' as compared_with

from {{ ref('stg_crm__opportunities') }} as opportunities
inner join {{ ref('stg_crm__opportunity_stage_history') }} as history
    on history.opportunity_id = opportunities.opportunity_id
where history.currency <> opportunities.currency

union all

select
    opportunities.opportunity_id,
    'line_items' as compared_with

from {{ ref('stg_crm__opportunities') }} as opportunities
inner join {{ ref('stg_crm__opportunity_line_items') }} as line_items
    on line_items.opportunity_id = opportunities.opportunity_id
where line_items.currency <> opportunities.currency
