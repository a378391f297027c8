-- One filing per company and quarter (derived upstream). Stressor handled: filed_at written in
-- Beijing time instead of UTC. Filings are made between 09:00 and 19:00 Beijing time, i.e.
-- 01:00-11:00 UTC: a filed_at outside that window that falls inside it once shifted back by
-- the province's UTC offset (+8) is converted back. Shifted values that stay inside the
-- window (09:00-11:00 UTC) cannot be recognised and are kept.
with

source as (

    select * from {{ source('enterprise', 'company_filings') }}

),

provinces as (

    select * from {{ ref('stg_enterprise__provinces') }}

),

shifted as (

    select
        source.*,
        source.filed_at
        - to_seconds(cast(round(coalesce(provinces.utc_offset_hours, 8) * 3600) as bigint))
            as filed_at_shifted_back

    from source
    left join provinces
        on trim(source.province) = provinces.province

),

checked as (

    select
        *,
        coalesce(
            cast(filed_at as time) not between time '01:00:00' and time '10:59:59'
            and cast(filed_at_shifted_back as time) between time '01:00:00' and time '10:59:59',
            false
        ) as is_filed_at_local_time

    from shifted

),

renamed as (

    select
        ---------- ids
        filing_id,
        upper(trim(company_id)) as company_id,

        ---------- attributes
        company_name,
        trim(province) as province,
        listing_status,
        exchange,
        filing_type,
        case
            when filing_type = 'SAMR annual report' then 'SAMR_ANNUAL'
            when filing_type = 'Quarterly statistics report' then 'STATISTICS_QUARTERLY'
            else 'EXCHANGE_PERIODIC'
        end as report_category,
        title,
        document_url,

        ---------- dates and timestamps (UTC)
        cast(fiscal_period as date) as fiscal_period,
        cast(deadline as date) as deadline,
        case when is_filed_at_local_time then filed_at_shifted_back else filed_at end as filed_at,
        filed_at as filed_at_raw,
        is_late_filing,

        ---------- numerics
        figures_disclosed,
        page_count,

        ---------- data quality flags
        is_filed_at_local_time as is_filed_at_tz_repaired

    from checked

)

select * from renamed
