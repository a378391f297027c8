with

members as (

    select * from {{ ref('stg_crm__campaign_members') }}

),

campaigns as (

    select campaign_id, campaign_type, start_date from {{ ref('stg_crm__campaigns') }}

),

contacts as (

    select contact_id, account_id from {{ ref('stg_crm__contacts') }}

),

final as (

    select
        ---------- ids
        members.campaign_member_id,
        members.campaign_id,
        members.contact_id,
        members.account_id,
        contacts.account_id as contact_account_id,

        ---------- text
        campaigns.campaign_type,
        members.member_source,
        members.status,

        ---------- numerics
        date_diff('day', members.campaign_start_date, cast(members.created_at as date))
            as days_from_campaign_start,
        date_diff('day', cast(members.created_at as date), members.first_responded_date)
            as days_to_response,

        ---------- booleans
        members.has_responded,
        members.is_contact_id_drifted,

        ---------- dates
        members.campaign_start_date,
        members.created_at,
        members.first_responded_date

    from members
    left join campaigns
        on campaigns.campaign_id = members.campaign_id
    left join contacts
        on contacts.contact_id = members.contact_id

)

select * from final
