{#-
    Opportunities with USD amounts, account attributes, line-item, quote and stage-history
    rollups, and snapshot-relative ages.
    - amount_usd = amount / conversion_rate of the resolved (account) currency, to cents.
    - amount_usd_clean is amount_usd with flagged x1000 outliers set to NULL: pipeline and
      booking totals downstream sum amount_usd_clean, so fat-fingered amounts are visible but do
      not distort totals.
    - sales_cycle_days = close_date - created date, for closed deals; age_days = snapshot day -
      created date, for open deals.
    - fiscal_year / fiscal_quarter_number come from the published fiscal_quarter (so deals without
      a close date keep their quarter); fiscal_quarter_start_date is the first day of that quarter.
-#}
with

opportunities as (

    select * from {{ ref('stg_crm__opportunities') }}

),

accounts as (

    select * from {{ ref('int_accounts_enriched') }}

),

line_items as (

    select
        opportunity_id,
        count(*) as line_item_count,
        sum(total_price) as line_items_total,
        count(*) filter (where is_unit_price_outlier) as unit_price_outlier_count

    from {{ ref('stg_crm__opportunity_line_items') }}
    group by opportunity_id

),

quotes as (

    select
        opportunity_id,
        count(*) as quote_count,
        count(*) filter (where status = 'Accepted') as accepted_quote_count

    from {{ ref('stg_crm__quotes') }}
    group by opportunity_id

),

stages as (

    select
        opportunity_id,
        count(*) as stage_version_count,
        count(*) filter (where is_stage_advance) as stage_advance_count,
        count(*) filter (where is_stage_regression) as stage_regression_count,
        max(valid_from) filter (where is_current) as current_stage_since

    from {{ ref('int_opportunity_stages_sequenced') }}
    group by opportunity_id

),

enriched as (

    select
        ---------- ids
        opportunities.opportunity_id,
        opportunities.account_id,
        opportunities.owner_id,

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
        accounts.account_name,
        accounts.country as account_country,
        accounts.segment as account_segment,
        accounts.industry as account_industry,

        ---------- numerics
        {{ stage_sort_order('opportunities.stage') }} as stage_sort_order,
        opportunities.probability,
        opportunities.fiscal_year,
        opportunities.fiscal_quarter_number,
        opportunities.conversion_rate,
        opportunities.amount,
        opportunities.expected_revenue,
        {{ to_usd('opportunities.amount', 'opportunities.conversion_rate') }} as amount_usd,
        case
            when not opportunities.is_amount_outlier
                then {{ to_usd('opportunities.amount', 'opportunities.conversion_rate') }}
        end as amount_usd_clean,
        {{ to_usd('opportunities.expected_revenue', 'opportunities.conversion_rate') }}
            as expected_revenue_usd,
        coalesce(line_items.line_item_count, 0) as line_item_count,
        coalesce(line_items.line_items_total, 0) as line_items_total,
        {{ to_usd('coalesce(line_items.line_items_total, 0)', 'opportunities.conversion_rate') }}
            as line_items_total_usd,
        coalesce(quotes.quote_count, 0) as quote_count,
        coalesce(quotes.accepted_quote_count, 0) as accepted_quote_count,
        coalesce(stages.stage_version_count, 0) as stage_version_count,
        coalesce(stages.stage_advance_count, 0) as stage_advance_count,
        coalesce(stages.stage_regression_count, 0) as stage_regression_count,
        case
            when opportunities.is_closed
                then date_diff('day', cast(opportunities.created_at as date), opportunities.close_date)
        end as sales_cycle_days,
        case
            when not opportunities.is_closed
                then date_diff('day', cast(opportunities.created_at as date), {{ as_of_date() }})
        end as age_days,

        ---------- booleans
        opportunities.is_closed,
        opportunities.is_won,
        not opportunities.is_closed as is_open,
        opportunities.is_closed and not opportunities.is_won as is_lost,
        opportunities.is_amount_outlier,
        opportunities.is_currency_conflict,
        opportunities.is_account_id_drifted,
        opportunities.is_close_date_missing,
        coalesce(line_items.unit_price_outlier_count, 0) > 0 as has_unit_price_outlier,

        ---------- dates
        opportunities.created_at,
        opportunities.close_date,
        make_date(opportunities.fiscal_year, opportunities.fiscal_quarter_number * 3 - 2, 1)
            as fiscal_quarter_start_date,
        stages.current_stage_since

    from opportunities
    left join accounts
        on accounts.account_id = opportunities.account_id
    left join line_items
        on line_items.opportunity_id = opportunities.opportunity_id
    left join quotes
        on quotes.opportunity_id = opportunities.opportunity_id
    left join stages
        on stages.opportunity_id = opportunities.opportunity_id

)

select * from enriched
