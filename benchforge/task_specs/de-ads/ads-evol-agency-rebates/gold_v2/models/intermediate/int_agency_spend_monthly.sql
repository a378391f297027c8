-- Monthly USD spend of the accounts each agency manages, and the rebate the partner programme
-- pays on it. Eligible spend excludes accounts that are CANCELLED (rebates are withheld on closed
-- accounts). Rebate rate = base rate of the agency's partner tier (PREMIER 4%, PARTNER 2.5%,
-- NONE 1%) + a 1-point volume bonus in months whose eligible spend reaches 1,000 USD.
with

spend as (

    select * from {{ ref('int_account_spend_daily') }}

),

accounts as (

    select * from {{ ref('stg_ads__ad_accounts') }}

),

agencies as (

    select * from {{ ref('stg_ads__agencies') }}

),

monthly as (

    select
        spend.agency_id,
        cast(date_trunc('month', spend.stat_date) as date) as billing_month,
        count(distinct spend.account_id) as accounts_with_delivery,
        count(distinct spend.account_id) filter (where accounts.account_status <> 'CANCELLED')
            as eligible_accounts,
        {{ sum_exact('spend.cost_usd') }} as cost_usd,
        coalesce(
            {{ sum_exact("case when accounts.account_status <> 'CANCELLED' then spend.cost_usd end") }},
            0
        ) as eligible_cost_usd

    from spend
    inner join accounts
        on spend.account_id = accounts.account_id
    where spend.agency_id is not null
    group by spend.agency_id, cast(date_trunc('month', spend.stat_date) as date)

),

rated as (

    select
        monthly.*,
        agencies.partner_tier,
        case agencies.partner_tier
            when 'PREMIER' then 0.04
            when 'PARTNER' then 0.025
            else 0.01
        end as base_rebate_rate,
        case when monthly.eligible_cost_usd >= 1000 then 0.01 else 0.0 end as volume_bonus_rate

    from monthly
    left join agencies
        on monthly.agency_id = agencies.agency_id

),

final as (

    select
        ---------- ids
        agency_id || ':' || strftime(billing_month, '%Y-%m') as agency_month_id,
        agency_id,

        ---------- attributes
        billing_month,
        partner_tier,

        ---------- spend (USD at pinned rates)
        accounts_with_delivery,
        eligible_accounts,
        cost_usd,
        eligible_cost_usd,

        ---------- rebate
        cast(base_rebate_rate as double) as base_rebate_rate,
        cast(volume_bonus_rate as double) as volume_bonus_rate,
        cast(base_rebate_rate + volume_bonus_rate as double) as rebate_rate,
        round(eligible_cost_usd * cast(base_rebate_rate + volume_bonus_rate as double), 2) as rebate_usd

    from rated

)

select * from final
