with

activities as (

    select * from {{ ref('int_activities_unioned') }}

)

select * from activities
