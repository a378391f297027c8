{#-
    Stressors handled here:
    - key_drift on account_id: trimmed and upper-cased (flag is_account_id_drifted).
    - missing_values on email and phone: kept NULL and flagged.
-#}
with

source as (

    select * from {{ source('crm', 'contacts') }}

),

renamed as (

    select
        ---------- ids
        contact_id,
        {{ normalize_key('account_id') }} as account_id,
        {{ normalize_key('owner_id') }} as owner_id,

        ---------- text
        salutation,
        first_name,
        last_name,
        trim(coalesce(first_name, '') || ' ' || coalesce(last_name, '')) as full_name,
        title,
        department,
        email,
        phone,
        mobile_phone,
        mailing_street,
        mailing_city,
        mailing_postal_code,
        country,
        locale,
        lead_source,

        ---------- booleans
        has_opted_out_of_email,
        do_not_call,
        is_primary_contact,
        account_id <> {{ normalize_key('account_id') }} as is_account_id_drifted,
        email is null as is_email_missing,
        phone is null as is_phone_missing,

        ---------- dates
        birthdate,
        created_at

    from source

)

select * from renamed
