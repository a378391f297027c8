{#- Stressor handled here: key_drift on contact_id (trimmed and upper-cased, flag is_contact_id_drifted). -#}
with

source as (

    select * from {{ source('crm', 'campaign_members') }}

),

renamed as (

    select
        ---------- ids
        campaign_member_id,
        {{ normalize_key('campaign_id') }} as campaign_id,
        {{ normalize_key('contact_id') }} as contact_id,
        {{ normalize_key('account_id') }} as account_id,

        ---------- text
        member_source,
        status,

        ---------- booleans
        has_responded,
        contact_id <> {{ normalize_key('contact_id') }} as is_contact_id_drifted,

        ---------- dates
        campaign_start_date,
        contact_created_at,
        created_at,
        first_responded_date

    from source

)

select * from renamed
