with

accounts as (

    select * from {{ ref('int_accounts_enriched') }}

),

rollups as (

    select * from {{ ref('int_account_activity_rolled_up') }}

),

owners as (

    select user_id, full_name from {{ ref('int_users_hierarchy_resolved') }}

),

final as (

    select
        ---------- ids
        accounts.account_id,
        accounts.owner_id,

        ---------- text
        accounts.account_name,
        owners.full_name as owner_name,
        accounts.country,
        accounts.country_name,
        accounts.region,
        accounts.currency,
        accounts.billing_city,
        accounts.website,
        accounts.industry,
        accounts.account_type,
        accounts.rating,
        accounts.ownership,
        accounts.segment,
        accounts.customer_priority,
        accounts.sla_tier,
        accounts.as_of_account_type,
        accounts.as_of_segment,
        case
            when rollups.won_opportunity_count > 0 or rollups.active_contract_count > 0 then 'Customer'
            when rollups.open_opportunity_count > 0 then 'Active Prospect'
            else 'Inactive'
        end as lifecycle_stage,

        ---------- numerics
        accounts.annual_revenue_usd,
        accounts.number_of_employees,
        accounts.history_version_count,
        accounts.owner_change_count,
        rollups.contact_count,
        rollups.opportunity_count,
        rollups.open_opportunity_count,
        rollups.won_opportunity_count,
        rollups.won_amount_usd,
        rollups.open_pipeline_usd,
        rollups.task_count,
        rollups.event_count,
        rollups.case_count,
        rollups.open_case_count,
        rollups.sla_breached_case_count,
        rollups.first_response_breached_case_count,
        case
            when rollups.case_count > 0
                then round(100.0 * rollups.first_response_breached_case_count / rollups.case_count, 2)
        end as first_response_breach_rate_pct,
        rollups.contract_count,
        rollups.active_contract_count,
        rollups.order_count,
        rollups.order_total_usd,
        date_diff('day', cast(rollups.last_activity_at as date), {{ as_of_date() }})
            as days_since_last_activity,

        ---------- booleans
        accounts.is_active,
        accounts.is_industry_backfilled,
        accounts.is_annual_revenue_coerced,
        rollups.amount_outlier_count > 0 as has_amount_outlier,

        ---------- timestamps
        accounts.created_at,
        rollups.first_opportunity_at,
        rollups.last_activity_at

    from accounts
    left join rollups
        on rollups.account_id = accounts.account_id
    left join owners
        on owners.user_id = accounts.owner_id

)

select * from final
