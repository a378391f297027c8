{#-
    Account current state integrated with its (deduplicated) SCD history and the country lookup.
    - industry: the entity value, or, where it is missing, the current history version's industry
      (the current version equals the entity row by construction); flag is_industry_backfilled.
    - The version valid at the end of the snapshot day (var as_of_date) gives the as-of account
      type, segment and owner; about 4% of current versions start after the snapshot.
-#}
with

accounts as (

    select * from {{ ref('stg_crm__accounts') }}

),

history as (

    select * from {{ ref('stg_crm__account_history') }}

),

countries as (

    select * from {{ ref('stg_crm__countries') }}

),

history_stats as (

    select
        account_id,
        count(*) as history_version_count,
        count(*) filter (where is_duplicate_current_fixed) as duplicate_current_fixed_count,
        min(valid_from) as first_version_valid_from

    from history
    group by account_id

),

owner_changes as (

    select
        account_id,
        count(*) filter (where owner_id <> previous_owner_id) as owner_change_count

    from (
        select
            account_id,
            owner_id,
            lag(owner_id) over (
                partition by account_id order by version_number
            ) as previous_owner_id
        from history
    ) as owner_changes
    group by account_id

),

current_versions as (

    select * from history where is_current

),

as_of_versions as (

    select *
    from history
    where valid_from < {{ as_of_end_ts() }}
        and (valid_to is null or valid_to >= {{ as_of_end_ts() }})

),

enriched as (

    select
        ---------- ids
        accounts.account_id,
        accounts.owner_id,
        current_versions.account_history_id as current_history_id,
        as_of_versions.account_history_id as as_of_history_id,
        as_of_versions.owner_id as as_of_owner_id,

        ---------- text
        accounts.account_name,
        accounts.country,
        countries.country_name,
        countries.region,
        accounts.currency,
        accounts.locale,
        accounts.billing_city,
        accounts.website,
        coalesce(accounts.industry, current_versions.industry) as industry,
        accounts.account_type,
        accounts.rating,
        accounts.ownership,
        accounts.segment,
        accounts.customer_priority,
        accounts.sla_tier,
        as_of_versions.account_type as as_of_account_type,
        as_of_versions.segment as as_of_segment,
        as_of_versions.sla_tier as as_of_sla_tier,

        ---------- numerics
        accounts.annual_revenue_usd,
        accounts.number_of_employees,
        history_stats.history_version_count,
        coalesce(owner_changes.owner_change_count, 0) as owner_change_count,
        history_stats.duplicate_current_fixed_count,

        ---------- booleans
        accounts.is_active,
        accounts.industry is null
            and current_versions.industry is not null as is_industry_backfilled,
        accounts.is_annual_revenue_coerced,
        current_versions.valid_from >= {{ as_of_end_ts() }} as is_current_version_after_as_of,

        ---------- timestamps
        accounts.created_at,
        history_stats.first_version_valid_from,
        current_versions.valid_from as current_version_valid_from

    from accounts
    left join current_versions
        on current_versions.account_id = accounts.account_id
    left join as_of_versions
        on as_of_versions.account_id = accounts.account_id
    left join history_stats
        on history_stats.account_id = accounts.account_id
    left join owner_changes
        on owner_changes.account_id = accounts.account_id
    left join countries
        on countries.country_code = accounts.country

)

select * from enriched
