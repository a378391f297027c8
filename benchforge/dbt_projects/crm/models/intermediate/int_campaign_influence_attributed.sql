{#-
    Campaign influence on opportunities (multi-touch attribution).
    A campaign influences an opportunity when a contact at the opportunity's account responded to
    it (has_responded) with a first_responded_date in the 180 days up to and including the
    opportunity's creation date. Grain: one row per (opportunity, influencing campaign).
    - influence_weight = 1 / number of influencing campaigns of the opportunity (even split).
    - is_first_touch / is_last_touch: earliest / latest first response (ties broken by campaign_id).
    - attributed_amount_usd = amount_usd_clean x weight (NULL for amount outliers);
      attributed_won_amount_usd the same for Closed Won opportunities, else 0.
-#}
with

members as (

    select * from {{ ref('stg_crm__campaign_members') }}
    where has_responded and first_responded_date is not null

),

opportunities as (

    select * from {{ ref('int_opportunities_enriched') }}

),

touches as (

    select
        opportunities.opportunity_id,
        members.campaign_id,
        count(*) as touch_count,
        min(members.first_responded_date) as first_touch_date,
        max(members.first_responded_date) as last_touch_date

    from opportunities
    inner join members
        on members.account_id = opportunities.account_id
        and members.first_responded_date <= cast(opportunities.created_at as date)
        and members.first_responded_date >= cast(opportunities.created_at as date) - 180
    group by opportunities.opportunity_id, members.campaign_id

),

ranked as (

    select
        *,
        count(*) over (partition by opportunity_id) as influencing_campaign_count,
        row_number() over (
            partition by opportunity_id order by first_touch_date, campaign_id
        ) as first_touch_rank,
        row_number() over (
            partition by opportunity_id order by last_touch_date desc, campaign_id desc
        ) as last_touch_rank

    from touches

),

attributed as (

    select
        ---------- ids
        ranked.opportunity_id || '|' || ranked.campaign_id as campaign_influence_id,
        ranked.opportunity_id,
        ranked.campaign_id,
        opportunities.account_id,

        ---------- text
        opportunities.stage as opportunity_stage,

        ---------- numerics
        ranked.touch_count,
        ranked.influencing_campaign_count,
        round(1.0 / ranked.influencing_campaign_count, 6) as influence_weight,
        opportunities.amount_usd_clean as opportunity_amount_usd,
        {{ to_money('opportunities.amount_usd_clean / ranked.influencing_campaign_count') }}
            as attributed_amount_usd,
        case
            when opportunities.is_won
                then {{ to_money('opportunities.amount_usd_clean / ranked.influencing_campaign_count') }}
            else 0
        end as attributed_won_amount_usd,
        date_diff('day', ranked.first_touch_date, cast(opportunities.created_at as date))
            as days_from_first_touch_to_opportunity,

        ---------- booleans
        ranked.first_touch_rank = 1 as is_first_touch,
        ranked.last_touch_rank = 1 as is_last_touch,
        opportunities.is_won as is_opportunity_won,
        opportunities.is_closed as is_opportunity_closed,

        ---------- dates
        ranked.first_touch_date,
        ranked.last_touch_date,
        opportunities.created_at as opportunity_created_at

    from ranked
    inner join opportunities
        on opportunities.opportunity_id = ranked.opportunity_id

)

select * from attributed
