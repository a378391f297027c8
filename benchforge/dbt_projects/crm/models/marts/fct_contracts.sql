{#-
    is_active_as_of: the snapshot day falls between start_date and end_date; days_to_end: end_date
    - snapshot day (negative once expired); total_contract_value = annual value x term / 12.
-#}
with

contracts as (

    select * from {{ ref('stg_crm__contracts') }}

),

order_stats as (

    select
        contract_id,
        count(*) as order_count,
        count(*) filter (where status = 'Fulfilled') as fulfilled_order_count,
        coalesce(sum(order_total) filter (where status <> 'Cancelled'), 0) as ordered_total,
        coalesce(sum(order_total_usd) filter (where status <> 'Cancelled'), 0) as ordered_total_usd,
        min(effective_date) as first_order_date

    from {{ ref('int_orders_summarized') }}
    group by contract_id

),

final as (

    select
        ---------- ids
        contracts.contract_id,
        contracts.contract_number,
        contracts.account_id,
        contracts.owner_id,

        ---------- text
        contracts.status,
        contracts.currency,
        contracts.billing_frequency,
        contracts.payment_terms,

        ---------- numerics
        contracts.conversion_rate,
        contracts.contract_term_months,
        contracts.annual_contract_value,
        {{ to_usd('contracts.annual_contract_value', 'contracts.conversion_rate') }}
            as annual_contract_value_usd,
        {{ to_money('contracts.annual_contract_value * contracts.contract_term_months / 12.0') }}
            as total_contract_value,
        {{ to_usd('contracts.annual_contract_value * contracts.contract_term_months / 12.0',
                  'contracts.conversion_rate') }} as total_contract_value_usd,
        coalesce(order_stats.order_count, 0) as order_count,
        coalesce(order_stats.fulfilled_order_count, 0) as fulfilled_order_count,
        coalesce(order_stats.ordered_total, 0) as ordered_total,
        coalesce(order_stats.ordered_total_usd, 0) as ordered_total_usd,
        date_diff('day', {{ as_of_date() }}, contracts.end_date) as days_to_end,
        date_diff('day', contracts.customer_signed_date, contracts.start_date) as days_signed_before_start,

        ---------- booleans
        contracts.auto_renew,
        contracts.start_date <= {{ as_of_date() }} and contracts.end_date >= {{ as_of_date() }}
            as is_active_as_of,

        ---------- dates
        contracts.customer_signed_date,
        contracts.start_date,
        contracts.end_date,
        order_stats.first_order_date

    from contracts
    left join order_stats
        on order_stats.contract_id = contracts.contract_id

)

select * from final
