{#-
    Monthly support SLA scorecard by account SLA tier and case priority, for the cases created in
    the month (calendar month of created_at, UTC).
    - sla_breach_rate_pct: resolution-SLA breaches over closed cases x 100 (NULL without closed cases).
    - first_response_breach_rate_pct: first-response breaches over all cases x 100.
    - avg_answer_hours: mean hours from creation to answered_at over answered cases.
    - avg_csat_score: mean CSAT over surveyed cases (NULL when none was surveyed).
-#}
with

cases as (

    select * from {{ ref('int_cases_sla_evaluated') }}

),

monthly as (

    select
        cast(date_trunc('month', created_at) as date) as created_month,
        account_sla_tier,
        priority,
        count(*) as case_count,
        count(*) filter (where is_closed) as closed_case_count,
        count(*) filter (where is_sla_breached) as sla_breached_case_count,
        count(*) filter (where is_first_response_breached) as first_response_breached_case_count,
        count(answered_at) as answered_case_count,
        avg(date_diff('second', created_at, answered_at)) / 3600.0 as avg_answer_hours,
        avg(csat_score) as avg_csat_score

    from cases
    group by cast(date_trunc('month', created_at) as date), account_sla_tier, priority

),

final as (

    select
        ---------- ids
        strftime(created_month, '%Y-%m') || '|' || account_sla_tier || '|' || priority
            as support_sla_month_id,

        ---------- text
        account_sla_tier,
        priority,

        ---------- numerics
        {{ first_response_target_hours('account_sla_tier') }} as first_response_target_hours,
        case_count,
        closed_case_count,
        sla_breached_case_count,
        case
            when closed_case_count > 0
                then round(100.0 * sla_breached_case_count / closed_case_count, 2)
        end as sla_breach_rate_pct,
        answered_case_count,
        first_response_breached_case_count,
        round(100.0 * first_response_breached_case_count / case_count, 2)
            as first_response_breach_rate_pct,
        round(avg_answer_hours, 2) as avg_answer_hours,
        round(avg_csat_score, 2) as avg_csat_score,

        ---------- dates
        created_month

    from monthly

)

select * from final
