with

source as (

    select * from {{ source('crm', 'contracts') }}

),

renamed as (

    select
        ---------- ids
        contract_id,
        {{ normalize_key('account_id') }} as account_id,
        {{ normalize_key('owner_id') }} as owner_id,
        contract_number,

        ---------- text
        status,
        currency,
        billing_frequency,
        payment_terms,
        special_terms,

        ---------- numerics
        conversion_rate,
        contract_term_months,
        {{ to_money('annual_contract_value') }} as annual_contract_value,

        ---------- booleans
        auto_renew,

        ---------- dates
        customer_signed_date,
        start_date,
        end_date

    from source

)

select * from renamed
