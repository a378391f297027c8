{#- Stressor handled here: missing_values on company (kept NULL, flag is_company_missing). -#}
with

source as (

    select * from {{ source('crm', 'leads') }}

),

renamed as (

    select
        ---------- ids
        lead_id,
        {{ normalize_key('campaign_id') }} as campaign_id,
        {{ normalize_key('owner_id') }} as owner_id,
        {{ normalize_key('converted_contact_id') }} as converted_contact_id,
        {{ normalize_key('converted_account_id') }} as converted_account_id,

        ---------- text
        first_name,
        last_name,
        trim(coalesce(first_name, '') || ' ' || coalesce(last_name, '')) as full_name,
        company,
        title,
        email,
        phone,
        city,
        country,
        locale,
        industry,
        lead_source,
        rating,
        status,
        description,

        ---------- numerics
        {{ to_money('annual_revenue') }} as annual_revenue_usd,
        number_of_employees,
        lead_score,

        ---------- booleans
        is_converted,
        has_opted_out_of_email,
        company is null as is_company_missing,

        ---------- dates
        created_at,
        converted_contact_created_at,
        converted_date

    from source

)

select * from renamed
