{#-
    Month-end pipeline snapshots rebuilt from the deduplicated stage history.
    Months run from the month of the first opportunity's creation to the month of the snapshot
    day (var as_of_date). At each month end (the instant before the next month starts) the
    version of an opportunity in force is the one with valid_from < next month start and
    (valid_to is NULL or valid_to >= next month start); an opportunity is in the pipeline when
    that version's stage is open (not Closed Won / Closed Lost). Grain: one row per
    (snapshot month, open opportunity).
-#}
with

versions as (

    select * from {{ ref('int_opportunity_stages_sequenced') }}

),

bounds as (

    select
        date_trunc('month', min(created_at)) as first_month,
        date_trunc('month', {{ as_of_date() }}) as last_month

    from {{ ref('stg_crm__opportunities') }}

),

months as (

    select
        cast(month_start as date) as snapshot_month,
        cast(month_start + interval 1 month as timestamp) as next_month_start

    from bounds,
        generate_series(bounds.first_month, bounds.last_month, interval 1 month) as s (month_start)

),

snapshots as (

    select
        ---------- ids
        strftime(months.snapshot_month, '%Y-%m') || '|' || versions.opportunity_id
            as pipeline_snapshot_id,
        versions.opportunity_id,
        versions.opportunity_history_id,

        ---------- text
        versions.stage,
        versions.forecast_category,
        versions.currency,

        ---------- numerics
        versions.stage_sort_order,
        versions.probability,
        versions.amount,
        versions.expected_revenue,
        versions.amount_usd,
        versions.expected_revenue_usd,
        versions.version_number,
        round(date_diff('second', versions.valid_from, months.next_month_start) / 86400.0, 2)
            as days_in_stage_at_snapshot,

        ---------- dates
        months.snapshot_month,
        cast(months.next_month_start - interval 1 day as date) as snapshot_date,
        versions.valid_from

    from months
    inner join versions
        on versions.valid_from < months.next_month_start
        and (versions.valid_to is null or versions.valid_to >= months.next_month_start)
    where versions.stage not in ('Closed Won', 'Closed Lost')

)

select * from snapshots
