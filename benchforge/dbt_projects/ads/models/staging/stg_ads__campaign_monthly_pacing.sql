-- Published upstream from the clean campaign stats (before stressors): used to reconcile.
with

source as (

    select * from {{ source('ads', 'campaign_monthly_pacing') }}

),

renamed as (

    select
        ---------- ids
        pacing_id,
        upper(trim(campaign_id)) as campaign_id,
        upper(trim(account_id)) as account_id,

        ---------- attributes
        cast(stat_month as date) as stat_month,
        upper(trim(currency)) as currency,

        ---------- numerics (money in the account currency)
        round(daily_budget, 2) as daily_budget,
        delivery_days,
        round(cost, 2) as cost,
        round(budget_capacity, 2) as budget_capacity,
        utilization

    from source

)

select * from renamed
