{#-
    Stressors handled here:
    - key_drift on account_id: trimmed and upper-cased (flag is_account_id_drifted).
    - currency_conflict on currency: a sync overwrote the code while the amount stayed in the
      original currency. The parent account's currency is authoritative (opportunities take their
      currency from the account); the published code is kept as currency_raw and the row is
      flagged is_currency_conflict. conversion_rate is the rate of the resolved currency.
    - outliers on amount (x1000 fat-finger): the stage history carries the opportunity's amount on
      every version (opportunity_amount); an amount that disagrees with it is flagged
      is_amount_outlier. The amount is kept as entered, never dropped.
    - missing_values on close_date: kept NULL, flag is_close_date_missing.
-#}
with

source as (

    select * from {{ source('crm', 'opportunities') }}

),

accounts as (

    select account_id, currency from {{ source('crm', 'accounts') }}

),

currency_types as (

    select currency_code, conversion_rate from {{ source('crm', 'currency_types') }}

),

history_amounts as (

    select
        opportunity_id,
        min(opportunity_amount) as history_amount

    from {{ source('crm', 'opportunity_stage_history') }}
    group by opportunity_id

),

resolved as (

    select
        source.*,
        {{ normalize_key('source.account_id') }} as account_key,
        coalesce(accounts.currency, source.currency) as resolved_currency,
        history_amounts.history_amount

    from source
    left join accounts
        on accounts.account_id = {{ normalize_key('source.account_id') }}
    left join history_amounts
        on history_amounts.opportunity_id = source.opportunity_id

),

renamed as (

    select
        ---------- ids
        resolved.opportunity_id,
        resolved.account_key as account_id,
        {{ normalize_key('resolved.owner_id') }} as owner_id,

        ---------- text
        resolved.name as opportunity_name,
        resolved.opportunity_type,
        resolved.lead_source,
        resolved.stage,
        resolved.forecast_category,
        resolved.fiscal_quarter,
        resolved.loss_reason,
        resolved.competitor,
        resolved.next_step,
        resolved.description,
        resolved.country,
        resolved.resolved_currency as currency,
        resolved.currency as currency_raw,

        ---------- numerics
        currency_types.conversion_rate,
        {{ to_money('resolved.amount') }} as amount,
        {{ to_money('resolved.expected_revenue') }} as expected_revenue,
        resolved.probability,

        ---------- booleans
        resolved.is_closed,
        resolved.is_won,
        resolved.account_id <> resolved.account_key as is_account_id_drifted,
        (resolved.currency is distinct from resolved.resolved_currency) as is_currency_conflict,
        coalesce(resolved.amount <> resolved.history_amount, false) as is_amount_outlier,
        resolved.close_date is null as is_close_date_missing,

        ---------- dates
        resolved.created_at,
        resolved.close_date

    from resolved
    left join currency_types
        on currency_types.currency_code = resolved.resolved_currency

)

select * from renamed
