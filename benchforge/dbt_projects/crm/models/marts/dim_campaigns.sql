{#-
    response_rate_pct = responded members / members x 100; cost_per_response_usd = actual cost /
    responded members; influenced amounts are the even-split attributions of
    int_campaign_influence_attributed; roi = (attributed won amount - actual cost) / actual cost.
-#}
with

campaigns as (

    select * from {{ ref('stg_crm__campaigns') }}

),

member_stats as (

    select
        campaign_id,
        count(*) as member_count,
        count(*) filter (where has_responded) as responded_member_count

    from {{ ref('stg_crm__campaign_members') }}
    group by campaign_id

),

lead_stats as (

    select
        campaign_id,
        count(*) as lead_count,
        count(*) filter (where is_converted) as converted_lead_count

    from {{ ref('stg_crm__leads') }}
    where campaign_id is not null
    group by campaign_id

),

influence_stats as (

    select
        campaign_id,
        count(*) as influenced_opportunity_count,
        count(*) filter (where is_opportunity_won) as influenced_won_opportunity_count,
        coalesce(sum(attributed_amount_usd), 0) as attributed_pipeline_usd,
        coalesce(sum(attributed_won_amount_usd), 0) as attributed_won_amount_usd

    from {{ ref('int_campaign_influence_attributed') }}
    group by campaign_id

),

final as (

    select
        ---------- ids
        campaigns.campaign_id,
        campaigns.owner_id,

        ---------- text
        campaigns.campaign_name,
        campaigns.campaign_type,
        campaigns.status,
        campaigns.currency,

        ---------- numerics
        campaigns.budgeted_cost_usd,
        campaigns.actual_cost_usd,
        campaigns.expected_revenue_usd,
        campaigns.expected_response_pct,
        campaigns.number_sent,
        coalesce(member_stats.member_count, 0) as member_count,
        coalesce(member_stats.responded_member_count, 0) as responded_member_count,
        case
            when member_stats.member_count > 0
                then round(100.0 * member_stats.responded_member_count / member_stats.member_count, 2)
        end as response_rate_pct,
        case
            when member_stats.responded_member_count > 0
                then {{ to_money('campaigns.actual_cost_usd / member_stats.responded_member_count') }}
        end as cost_per_response_usd,
        coalesce(lead_stats.lead_count, 0) as lead_count,
        coalesce(lead_stats.converted_lead_count, 0) as converted_lead_count,
        coalesce(influence_stats.influenced_opportunity_count, 0) as influenced_opportunity_count,
        coalesce(influence_stats.influenced_won_opportunity_count, 0)
            as influenced_won_opportunity_count,
        coalesce(influence_stats.attributed_pipeline_usd, 0) as attributed_pipeline_usd,
        coalesce(influence_stats.attributed_won_amount_usd, 0) as attributed_won_amount_usd,
        case
            when campaigns.actual_cost_usd > 0
                then round(
                    (coalesce(influence_stats.attributed_won_amount_usd, 0) - campaigns.actual_cost_usd)
                    / campaigns.actual_cost_usd,
                    4
                )
        end as roi,
        campaigns.actual_cost_usd - campaigns.budgeted_cost_usd as budget_variance_usd,

        ---------- booleans
        campaigns.is_active,
        campaigns.is_budgeted_cost_coerced,

        ---------- dates
        campaigns.start_date,
        campaigns.end_date

    from campaigns
    left join member_stats
        on member_stats.campaign_id = campaigns.campaign_id
    left join lead_stats
        on lead_stats.campaign_id = campaigns.campaign_id
    left join influence_stats
        on influence_stats.campaign_id = campaigns.campaign_id

)

select * from final
