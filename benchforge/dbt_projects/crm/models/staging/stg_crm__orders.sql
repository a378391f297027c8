{#-
    Stressor handled here: currency_conflict on currency. Orders take their currency from the
    contract, and the amounts (and the order lines) stay in the contract currency, so the
    contract's currency is authoritative; the published code is kept as currency_raw and the row
    is flagged is_currency_conflict.
-#}
with

source as (

    select * from {{ source('crm', 'orders') }}

),

contracts as (

    select contract_id, currency from {{ source('crm', 'contracts') }}

),

renamed as (

    select
        ---------- ids
        source.order_id,
        {{ normalize_key('source.contract_id') }} as contract_id,
        {{ normalize_key('source.account_id') }} as account_id,
        {{ normalize_key('source.owner_id') }} as owner_id,
        source.order_number,
        source.po_number,

        ---------- text
        source.order_type,
        source.status,
        coalesce(contracts.currency, source.currency) as currency,
        source.currency as currency_raw,
        source.payment_terms,
        source.shipping_method,
        source.description,

        ---------- numerics
        source.conversion_rate,
        {{ to_money('source.shipping_amount') }} as shipping_amount,

        ---------- booleans
        (source.currency is distinct from coalesce(contracts.currency, source.currency))
            as is_currency_conflict,

        ---------- dates
        source.effective_date,
        source.created_at

    from source
    left join contracts
        on contracts.contract_id = {{ normalize_key('source.contract_id') }}

)

select * from renamed
