{#-
    Quarterly sales attainment per rep. A deal counts in the fiscal quarter it closed in
    (fiscal_quarter as published, so a closed deal without a close date still has its quarter).
    - won_amount_usd sums amount_usd_clean over Closed Won deals: flagged x1000 outliers are left
      out of the amount (they are counted in won_amount_outlier_count) but still count as wins.
    - win_rate_pct = won / closed deals x 100.
    - quarterly_quota_usd = annual_quota_usd / 4 (to cents); quota_attainment_pct = won amount /
      quarterly quota x 100; both NULL for users without a quota.
-#}
with

closed_opportunities as (

    select * from {{ ref('int_opportunities_enriched') }}
    where is_closed

),

users as (

    select user_id, full_name, department, manager_user_id, annual_quota_usd
    from {{ ref('int_users_hierarchy_resolved') }}

),

quarterly as (

    select
        owner_id,
        fiscal_quarter,
        fiscal_year,
        fiscal_quarter_number,
        fiscal_quarter_start_date,
        count(*) as closed_opportunity_count,
        count(*) filter (where is_won) as won_opportunity_count,
        count(*) filter (where is_lost) as lost_opportunity_count,
        count(*) filter (where is_won and is_amount_outlier) as won_amount_outlier_count,
        coalesce(sum(amount_usd_clean) filter (where is_won), 0) as won_amount_usd

    from closed_opportunities
    group by owner_id, fiscal_quarter, fiscal_year, fiscal_quarter_number, fiscal_quarter_start_date

),

with_quota as (

    select
        quarterly.*,
        users.full_name as owner_name,
        users.department as owner_department,
        users.manager_user_id,
        case
            when users.annual_quota_usd > 0 then {{ to_money('users.annual_quota_usd / 4.0') }}
        end as quarterly_quota_usd

    from quarterly
    left join users
        on users.user_id = quarterly.owner_id

),

final as (

    select
        ---------- ids
        owner_id || '|' || fiscal_quarter as rep_quarter_id,
        owner_id,
        manager_user_id,

        ---------- text
        owner_name,
        owner_department,
        fiscal_quarter,

        ---------- numerics
        fiscal_year,
        fiscal_quarter_number,
        closed_opportunity_count,
        won_opportunity_count,
        lost_opportunity_count,
        round(100.0 * won_opportunity_count / closed_opportunity_count, 2) as win_rate_pct,
        won_amount_usd,
        won_amount_outlier_count,
        quarterly_quota_usd,
        case
            when quarterly_quota_usd > 0
                then round(100.0 * won_amount_usd / quarterly_quota_usd, 2)
        end as quota_attainment_pct,

        ---------- dates
        fiscal_quarter_start_date

    from with_quota

)

select * from final
