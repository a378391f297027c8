with

influence as (

    select * from {{ ref('int_campaign_influence_attributed') }}

)

select * from influence
