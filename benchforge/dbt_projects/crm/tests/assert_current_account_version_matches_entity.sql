-- The current (deduplicated) account version equals the account row; annual revenue parsed from
-- text (type_coercion) must equal the history's numeric value.
select
    accounts.account_id

from {{ ref('stg_crm__accounts') }} as accounts
inner join {{ ref('stg_crm__account_history') }} as history
    on history.account_id = accounts.account_id
    and history.is_current
where accounts.account_type <> history.account_type
    or accounts.owner_id <> history.owner_id
    or accounts.segment <> history.segment
    or accounts.sla_tier <> history.sla_tier
    or accounts.annual_revenue_usd <> history.annual_revenue_usd
    or (accounts.industry is not null and accounts.industry <> history.industry)
