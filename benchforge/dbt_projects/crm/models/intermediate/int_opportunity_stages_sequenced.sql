{#-
    Stage durations from the deduplicated stage history. Each version's window [valid_from,
    valid_to) is cut at the end of the snapshot day: duration_days is the time spent in the
    version up to the snapshot (an open current version counts until the snapshot); versions that
    start after the snapshot (scheduled by the SCD engine into 2025) get a NULL duration and are
    flagged is_after_as_of.
-#}
with

history as (

    select * from {{ ref('stg_crm__opportunity_stage_history') }}

),

currency_types as (

    select * from {{ ref('stg_crm__currency_types') }}

),

sequenced as (

    select
        history.*,
        lag(history.stage) over (
            partition by history.opportunity_id order by history.version_number
        ) as previous_stage,
        lead(history.stage) over (
            partition by history.opportunity_id order by history.version_number
        ) as next_stage,
        count(*) over (partition by history.opportunity_id) as version_count,
        history.valid_from >= {{ as_of_end_ts() }} as is_after_as_of,
        least(coalesce(history.valid_to, {{ as_of_end_ts() }}), {{ as_of_end_ts() }}) as effective_to

    from history

),

timed as (

    select
        ---------- ids
        sequenced.opportunity_history_id,
        sequenced.opportunity_id,
        sequenced.last_modified_by_id,

        ---------- text
        sequenced.stage,
        sequenced.previous_stage,
        sequenced.next_stage,
        sequenced.forecast_category,
        sequenced.currency,

        ---------- numerics
        sequenced.version_number,
        sequenced.version_count,
        {{ stage_sort_order('sequenced.stage') }} as stage_sort_order,
        sequenced.probability,
        sequenced.amount,
        sequenced.expected_revenue,
        {{ to_usd('sequenced.amount', 'currency_types.conversion_rate') }} as amount_usd,
        {{ to_usd('sequenced.expected_revenue', 'currency_types.conversion_rate') }}
            as expected_revenue_usd,
        case
            when not sequenced.is_after_as_of
                then round(date_diff('second', sequenced.valid_from, sequenced.effective_to) / 86400.0, 2)
        end as duration_days,

        ---------- booleans
        sequenced.is_current,
        sequenced.is_duplicate_current_fixed,
        sequenced.is_after_as_of,
        sequenced.version_number = 1 as is_first_version,
        sequenced.previous_stage is not null
            and {{ stage_sort_order('sequenced.stage') }} > {{ stage_sort_order('sequenced.previous_stage') }}
            as is_stage_advance,
        sequenced.previous_stage is not null
            and {{ stage_sort_order('sequenced.stage') }} < {{ stage_sort_order('sequenced.previous_stage') }}
            as is_stage_regression,

        ---------- timestamps
        sequenced.valid_from,
        sequenced.valid_to

    from sequenced
    left join currency_types
        on currency_types.currency_code = sequenced.currency

)

select * from timed
