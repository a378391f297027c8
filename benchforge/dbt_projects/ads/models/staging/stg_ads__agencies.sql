with

source as (

    select * from {{ source('ads', 'agencies') }}

),

renamed as (

    select
        ---------- ids
        upper(trim(agency_id)) as agency_id,

        ---------- attributes
        agency_name,
        upper(trim(hq_country)) as hq_country,
        partner_tier,
        lower(trim(contact_email)) as contact_email,

        ---------- timestamps
        cast(created_at as timestamp) as created_at

    from source

)

select * from renamed
