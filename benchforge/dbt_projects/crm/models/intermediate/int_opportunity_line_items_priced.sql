{#-
    Opportunity lines priced in USD with list value, discount and cost.
    - Revenue of a line is total_price (published from the clean price, so x100 unit-price
      outliers do not affect it); USD = total_price / conversion_rate.
    - list_total = quantity x list_price; discount_amount = list_total - total_price
      (NULL on lines with a unit-price outlier, where the published unit price is wrong).
    - cost_usd = quantity x product unit cost (USD); gross_margin_usd = total_price_usd - cost_usd.
-#}
with

line_items as (

    select * from {{ ref('stg_crm__opportunity_line_items') }}

),

products as (

    select * from {{ ref('stg_crm__products') }}

),

opportunities as (

    select opportunity_id, account_id, owner_id, is_closed, is_won, close_date
    from {{ ref('stg_crm__opportunities') }}

),

priced as (

    select
        ---------- ids
        line_items.opportunity_line_item_id,
        line_items.opportunity_id,
        line_items.product_id,
        opportunities.account_id,
        opportunities.owner_id,

        ---------- text
        line_items.product_code,
        products.product_name,
        products.family as product_family,
        line_items.currency,

        ---------- numerics
        line_items.conversion_rate,
        line_items.quantity,
        line_items.discount_pct,
        line_items.list_price,
        line_items.unit_price,
        line_items.total_price,
        {{ to_money('line_items.quantity * line_items.list_price') }} as list_total,
        case
            when not line_items.is_unit_price_outlier
                then {{ to_money('line_items.quantity * line_items.list_price') }} - line_items.total_price
        end as discount_amount,
        {{ to_usd('line_items.total_price', 'line_items.conversion_rate') }} as total_price_usd,
        {{ to_money('line_items.quantity * products.unit_cost_usd') }} as cost_usd,
        {{ to_usd('line_items.total_price', 'line_items.conversion_rate') }}
            - {{ to_money('line_items.quantity * products.unit_cost_usd') }} as gross_margin_usd,

        ---------- booleans
        line_items.is_unit_price_outlier,
        opportunities.is_closed as is_opportunity_closed,
        opportunities.is_won as is_opportunity_won,

        ---------- dates
        line_items.service_date,
        line_items.created_at,
        opportunities.close_date as opportunity_close_date

    from line_items
    left join products
        on products.product_id = line_items.product_id
    left join opportunities
        on opportunities.opportunity_id = line_items.opportunity_id

)

select * from priced
