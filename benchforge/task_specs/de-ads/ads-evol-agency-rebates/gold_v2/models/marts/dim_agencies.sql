with

agencies as (

    select * from {{ ref('stg_ads__agencies') }}

),

countries as (

    select * from {{ ref('stg_ads__countries') }}

),

accounts as (

    select * from {{ ref('stg_ads__ad_accounts') }}

),

account_spend as (

    select
        account_id,
        {{ sum_exact('cost_usd') }} as lifetime_cost_usd

    from {{ ref('int_account_spend_daily') }}
    group by account_id

),

managed_accounts as (

    select
        accounts.agency_id,
        count(*) as managed_accounts,
        count(*) filter (where accounts.account_status = 'ACTIVE') as active_managed_accounts,
        count(distinct accounts.country) as managed_countries,
        coalesce({{ sum_exact('account_spend.lifetime_cost_usd') }}, 0) as managed_lifetime_cost_usd

    from accounts
    left join account_spend
        on accounts.account_id = account_spend.account_id
    where accounts.agency_id is not null
    group by accounts.agency_id

),

rebates as (

    select
        agency_id,
        count(*) as rebate_months,
        max(billing_month) as last_billing_month,
        {{ sum_exact('rebate_usd') }} as lifetime_rebate_usd

    from {{ ref('int_agency_spend_monthly') }}
    group by agency_id

),

final as (

    select
        ---------- ids
        agencies.agency_id,

        ---------- attributes
        agencies.agency_name,
        agencies.hq_country,
        countries.country_name as hq_country_name,
        agencies.partner_tier,
        agencies.contact_email,
        agencies.created_at,
        date_diff('day', cast(agencies.created_at as date), cast('{{ var("as_of_date") }}' as date)) as tenure_days,

        ---------- managed book
        coalesce(managed_accounts.managed_accounts, 0) as managed_accounts,
        coalesce(managed_accounts.active_managed_accounts, 0) as active_managed_accounts,
        coalesce(managed_accounts.managed_countries, 0) as managed_countries,
        coalesce(managed_accounts.managed_lifetime_cost_usd, 0) as managed_lifetime_cost_usd,

        ---------- partner programme rebates (USD)
        coalesce(rebates.rebate_months, 0) as rebate_months,
        rebates.last_billing_month,
        coalesce(rebates.lifetime_rebate_usd, 0) as lifetime_rebate_usd

    from agencies
    left join countries
        on agencies.hq_country = countries.country
    left join managed_accounts
        on agencies.agency_id = managed_accounts.agency_id
    left join rebates
        on agencies.agency_id = rebates.agency_id

)

select * from final
