with

source as (

    select * from {{ source('enterprise', 'industries') }}

),

renamed as (

    select
        ---------- ids
        upper(trim(industry_code)) as industry_code,

        ---------- attributes
        industry_name,
        industry_name_cn,
        sector,
        left(upper(trim(industry_code)), 1) as industry_section

    from source

)

select * from renamed
