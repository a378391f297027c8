{#-
    Stressor handled here: type_coercion on budgeted_cost (published as text such as '38,421.83'
    or '523.40 USD'); parsed back to a number, flag is_budgeted_cost_coerced.
-#}
with

source as (

    select * from {{ source('crm', 'campaigns') }}

),

renamed as (

    select
        ---------- ids
        campaign_id,
        {{ normalize_key('owner_id') }} as owner_id,

        ---------- text
        name as campaign_name,
        campaign_type,
        theme,
        status,
        currency,
        description,
        budgeted_cost as budgeted_cost_raw,

        ---------- numerics
        {{ to_money(parse_number('budgeted_cost')) }} as budgeted_cost_usd,
        {{ to_money('actual_cost') }} as actual_cost_usd,
        {{ to_money('expected_revenue') }} as expected_revenue_usd,
        expected_response_pct,
        number_sent,

        ---------- booleans
        is_active,
        budgeted_cost is not null
            and try_cast(budgeted_cost as double) is null as is_budgeted_cost_coerced,

        ---------- dates
        start_date,
        end_date

    from source

)

select * from renamed
