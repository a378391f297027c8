-- duplicate_current repaired: every account has exactly one current history version.
select
    accounts.account_id,
    count(history.account_history_id) as current_versions

from {{ ref('stg_crm__accounts') }} as accounts
left join {{ ref('stg_crm__account_history') }} as history
    on history.account_id = accounts.account_id
    and history.is_current
group by accounts.account_id
having count(history.account_history_id) <> 1
