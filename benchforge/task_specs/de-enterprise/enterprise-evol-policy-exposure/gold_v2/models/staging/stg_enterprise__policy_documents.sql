-- One policy document per row. Stressors handled:
--   * published_at written in Beijing time instead of UTC: publish_date is the Beijing date of
--     the UTC publication time, so a published_at whose Beijing date disagrees with
--     publish_date, and agrees once shifted back by the province offset (+8), is converted
--     back. A shift that keeps the same Beijing date cannot be recognised and is kept.
--   * blank body_text stays NULL and is flagged (char_count still gives the original length).
-- Support measures (subsidies, tax incentives, credit support, talent programmes) are told
-- apart from planning and regulation documents; a document is in force as of the as_of_date
-- variable when it is not repealed, already effective and not expired.
with

source as (

    select * from {{ source('enterprise', 'policy_documents') }}

),

provinces as (

    select * from {{ ref('stg_enterprise__provinces') }}

),

shifted as (

    select
        source.*,
        to_seconds(cast(round(coalesce(provinces.utc_offset_hours, 8) * 3600) as bigint)) as beijing_offset

    from source
    left join provinces
        on trim(source.province) = provinces.province

),

checked as (

    select
        *,
        coalesce(
            cast(published_at + beijing_offset as date) <> publish_date
            and cast(published_at as date) = publish_date,
            false
        ) as is_published_at_local_time

    from shifted

),

renamed as (

    select
        ---------- ids
        policy_id,
        doc_number,

        ---------- attributes
        level,
        trim(province) as province,
        province_cn,
        province_abbr,
        issuing_body,
        policy_type,
        policy_type in ('Subsidy', 'Tax incentive', 'Credit support', 'Talent program') as is_support_measure,
        upper(trim(industry_code)) as industry_code,
        industry_name_cn,
        upper(replace(related_industries, ' ', '')) as related_industries,
        title_cn,
        summary_en,
        body_text,
        status,
        source_url,

        ---------- dates and timestamps (UTC)
        case
            when is_published_at_local_time then published_at - beijing_offset
            else published_at
        end as published_at,
        published_at as published_at_raw,
        cast(publish_date as date) as publish_date,
        cast(effective_date as date) as effective_date,
        cast(expiry_date as date) as expiry_date,
        status <> 'Repealed'
        and cast(effective_date as date) <= cast('{{ var("as_of_date") }}' as date)
        and (expiry_date is null or cast(expiry_date as date) >= cast('{{ var("as_of_date") }}' as date))
            as is_in_force_as_of,

        ---------- numerics
        char_count,

        ---------- data quality flags
        is_published_at_local_time as is_published_at_tz_repaired,
        body_text is null as is_body_text_missing

    from checked

)

select * from renamed
