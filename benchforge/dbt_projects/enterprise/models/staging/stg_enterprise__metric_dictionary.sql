with

source as (

    select * from {{ source('enterprise', 'metric_dictionary') }}

),

renamed as (

    select
        ---------- ids
        upper(trim(indicator)) as indicator,

        ---------- attributes
        indicator_name,
        indicator_name_cn,
        definition,
        canonical_unit,
        category,
        value_kind

    from source

)

select * from renamed
