{#-
    Lead funnel: each lead with its source campaign, conversion timing and the account it became.
    - days_to_convert = converted_date - created date (converted leads only).
    - is_open: status Open - Not Contacted, Working - Contacted or Nurturing.
    - age_days: snapshot day - created date, for open leads.
    - converted_contact_account_id: the converted contact's account (must equal
      converted_account_id).
-#}
with

leads as (

    select * from {{ ref('stg_crm__leads') }}

),

campaigns as (

    select campaign_id, campaign_type, start_date from {{ ref('stg_crm__campaigns') }}

),

contacts as (

    select contact_id, account_id from {{ ref('stg_crm__contacts') }}

),

converted as (

    select
        ---------- ids
        leads.lead_id,
        leads.campaign_id,
        leads.owner_id,
        leads.converted_contact_id,
        leads.converted_account_id,
        contacts.account_id as converted_contact_account_id,

        ---------- text
        leads.full_name,
        leads.company,
        leads.country,
        leads.industry,
        leads.lead_source,
        leads.rating,
        leads.status,
        campaigns.campaign_type,

        ---------- numerics
        leads.lead_score,
        leads.annual_revenue_usd,
        leads.number_of_employees,
        case
            when leads.is_converted
                then date_diff('day', cast(leads.created_at as date), leads.converted_date)
        end as days_to_convert,
        case
            when leads.campaign_id is not null
                then date_diff('day', campaigns.start_date, cast(leads.created_at as date))
        end as days_from_campaign_start,
        case
            when leads.status in ('Open - Not Contacted', 'Working - Contacted', 'Nurturing')
                then date_diff('day', cast(leads.created_at as date), {{ as_of_date() }})
        end as age_days,

        ---------- booleans
        leads.is_converted,
        leads.status in ('Open - Not Contacted', 'Working - Contacted', 'Nurturing') as is_open,
        leads.campaign_id is not null as is_campaign_sourced,
        leads.is_converted and leads.converted_contact_created_at < leads.created_at
            as is_converted_to_existing_contact,
        leads.has_opted_out_of_email,
        leads.is_company_missing,

        ---------- dates
        leads.created_at,
        leads.converted_date,
        leads.converted_contact_created_at

    from leads
    left join campaigns
        on campaigns.campaign_id = leads.campaign_id
    left join contacts
        on contacts.contact_id = leads.converted_contact_id

)

select * from converted
