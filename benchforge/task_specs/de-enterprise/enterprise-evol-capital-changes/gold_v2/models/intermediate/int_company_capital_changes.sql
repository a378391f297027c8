-- Registered-capital change events: one row per registration version (after the first) whose
-- registered capital differs from the previous version of the same company, whatever the
-- version's change_type says (the registry records only the main reason of a change).
with

history as (

    select * from {{ ref('stg_enterprise__company_profile_history') }}

),

with_previous as (

    select
        history.*,
        lag(registered_capital_wan_cny) over (partition by company_id order by version_number)
            as previous_capital_wan_cny

    from history

),

final as (

    select
        ---------- ids
        change_id,
        company_id,
        version_number,

        ---------- when and why
        valid_from as changed_at,
        cast(valid_from as date) as change_date,
        change_type,
        change_type = 'Capital change' as is_labelled_capital_change,

        ---------- capital (万元 and CNY)
        previous_capital_wan_cny,
        registered_capital_wan_cny as new_capital_wan_cny,
        round(registered_capital_wan_cny - previous_capital_wan_cny, 2) as capital_delta_wan_cny,
        round((registered_capital_wan_cny - previous_capital_wan_cny) * 1e4, 2) as capital_delta_cny,
        round((registered_capital_wan_cny - previous_capital_wan_cny) / previous_capital_wan_cny * 100, 2)
            as capital_change_pct,
        case
            when registered_capital_wan_cny > previous_capital_wan_cny then 'INCREASE'
            else 'DECREASE'
        end as direction

    from with_previous
    where version_number > 1
        and registered_capital_wan_cny is distinct from previous_capital_wan_cny

)

select * from final
