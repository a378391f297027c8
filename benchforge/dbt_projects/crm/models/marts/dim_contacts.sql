with

contacts as (

    select * from {{ ref('stg_crm__contacts') }}

),

accounts as (

    select account_id, account_name from {{ ref('stg_crm__accounts') }}

),

engagement as (

    select * from {{ ref('int_contacts_engagement_aggregated') }}

),

final as (

    select
        ---------- ids
        contacts.contact_id,
        contacts.account_id,
        contacts.owner_id,

        ---------- text
        contacts.full_name,
        contacts.salutation,
        contacts.title,
        contacts.department,
        contacts.email,
        contacts.phone,
        contacts.mailing_city,
        contacts.country,
        contacts.lead_source,
        accounts.account_name,
        engagement.engagement_level,

        ---------- numerics
        engagement.task_count,
        engagement.completed_task_count,
        engagement.call_count,
        engagement.email_count,
        engagement.event_count,
        engagement.meetings_held_count,
        engagement.scheduled_after_as_of_count,
        engagement.activity_count_90d,
        engagement.campaign_membership_count,
        engagement.campaign_response_count,
        engagement.case_count,
        engagement.days_since_last_activity,

        ---------- booleans
        contacts.is_primary_contact,
        contacts.has_opted_out_of_email,
        contacts.do_not_call,
        not contacts.has_opted_out_of_email and contacts.email is not null as is_emailable,
        contacts.is_email_missing,
        contacts.is_phone_missing,
        contacts.is_account_id_drifted,

        ---------- timestamps
        contacts.created_at,
        engagement.first_activity_at,
        engagement.last_activity_at

    from contacts
    left join accounts
        on accounts.account_id = contacts.account_id
    left join engagement
        on engagement.contact_id = contacts.contact_id

)

select * from final
