with

opportunities as (

    select * from {{ ref('int_opportunities_enriched') }}

),

influence as (

    select
        opportunity_id,
        count(*) as influencing_campaign_count,
        min(campaign_id) filter (where is_first_touch) as first_touch_campaign_id,
        min(campaign_id) filter (where is_last_touch) as last_touch_campaign_id

    from {{ ref('int_campaign_influence_attributed') }}
    group by opportunity_id

),

final as (

    select
        ---------- ids
        opportunities.opportunity_id,
        opportunities.account_id,
        opportunities.owner_id,
        influence.first_touch_campaign_id,
        influence.last_touch_campaign_id,

        ---------- text
        opportunities.opportunity_name,
        opportunities.opportunity_type,
        opportunities.lead_source,
        opportunities.stage,
        opportunities.forecast_category,
        opportunities.fiscal_quarter,
        opportunities.loss_reason,
        opportunities.competitor,
        opportunities.currency,
        opportunities.currency_raw,

        ---------- numerics
        opportunities.stage_sort_order,
        opportunities.probability,
        opportunities.fiscal_year,
        opportunities.fiscal_quarter_number,
        opportunities.conversion_rate,
        opportunities.amount,
        opportunities.expected_revenue,
        opportunities.amount_usd,
        opportunities.amount_usd_clean,
        opportunities.expected_revenue_usd,
        opportunities.line_item_count,
        opportunities.line_items_total,
        opportunities.line_items_total_usd,
        opportunities.quote_count,
        opportunities.accepted_quote_count,
        opportunities.stage_version_count,
        opportunities.stage_advance_count,
        opportunities.stage_regression_count,
        coalesce(influence.influencing_campaign_count, 0) as influencing_campaign_count,
        opportunities.sales_cycle_days,
        opportunities.age_days,

        ---------- booleans
        opportunities.is_open,
        opportunities.is_closed,
        opportunities.is_won,
        opportunities.is_lost,
        opportunities.is_amount_outlier,
        opportunities.is_currency_conflict,
        opportunities.is_account_id_drifted,
        opportunities.is_close_date_missing,
        opportunities.has_unit_price_outlier,

        ---------- dates
        opportunities.created_at,
        cast(opportunities.created_at as date) as created_date,
        opportunities.close_date,
        opportunities.fiscal_quarter_start_date,
        opportunities.current_stage_since

    from opportunities
    left join influence
        on influence.opportunity_id = opportunities.opportunity_id

)

select * from final
