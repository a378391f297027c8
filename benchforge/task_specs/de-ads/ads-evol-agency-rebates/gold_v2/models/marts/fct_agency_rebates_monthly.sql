with

rebates as (

    select * from {{ ref('int_agency_spend_monthly') }}

),

agencies as (

    select * from {{ ref('stg_ads__agencies') }}

),

final as (

    select
        ---------- ids
        rebates.agency_month_id,
        rebates.agency_id,

        ---------- attributes
        agencies.agency_name,
        agencies.hq_country,
        rebates.partner_tier,
        rebates.billing_month,
        cast(year(rebates.billing_month) as integer) as billing_year,

        ---------- spend (USD)
        rebates.accounts_with_delivery,
        rebates.eligible_accounts,
        rebates.cost_usd,
        rebates.eligible_cost_usd,
        round(rebates.cost_usd - rebates.eligible_cost_usd, 2) as withheld_cost_usd,

        ---------- rebate
        rebates.base_rebate_rate,
        rebates.volume_bonus_rate,
        rebates.rebate_rate,
        rebates.volume_bonus_rate > 0 as is_volume_bonus_month,
        rebates.rebate_usd,
        cast(
            sum(cast(rebates.rebate_usd as decimal(38, 2))) over (
                partition by rebates.agency_id, year(rebates.billing_month)
                order by rebates.billing_month
                rows between unbounded preceding and current row
            ) as double
        ) as year_to_date_rebate_usd

    from rebates
    left join agencies
        on rebates.agency_id = agencies.agency_id

)

select * from final
