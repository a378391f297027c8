{#-
    Quote totals (not stored in the source) and the quote's outcome.
    - subtotal = sum of line total_price; discount_amount = subtotal x discount_pct;
      tax_amount = (subtotal - discount_amount) x tax_rate;
      grand_total = subtotal - discount_amount + tax_amount + shipping_handling (each to cents).
    - is_converted: the quote was Accepted and its opportunity is Closed Won (quote-to-order
      conversion; quotes are not linked to orders, so the won opportunity stands for the order).
    - is_expired: expiration_date before the snapshot day and the quote not Accepted.
-#}
with

quotes as (

    select * from {{ ref('stg_crm__quotes') }}

),

quote_lines as (

    select
        quote_id,
        count(*) as line_item_count,
        sum(quantity) as total_quantity,
        sum(total_price) as subtotal

    from {{ ref('stg_crm__quote_line_items') }}
    group by quote_id

),

opportunities as (

    select opportunity_id, stage, is_closed, is_won
    from {{ ref('stg_crm__opportunities') }}

),

subtotals as (

    select
        quotes.*,
        coalesce(quote_lines.line_item_count, 0) as line_item_count,
        coalesce(quote_lines.total_quantity, 0) as total_quantity,
        coalesce(quote_lines.subtotal, 0) as subtotal,
        {{ to_money('coalesce(quote_lines.subtotal, 0) * quotes.discount_pct') }} as discount_amount

    from quotes
    left join quote_lines
        on quote_lines.quote_id = quotes.quote_id

),

taxed as (

    select
        *,
        {{ to_money('(subtotal - discount_amount) * tax_rate') }} as tax_amount

    from subtotals

),

totaled as (

    select
        ---------- ids
        taxed.quote_id,
        taxed.quote_number,
        taxed.opportunity_id,
        taxed.account_id,
        taxed.owner_id,

        ---------- text
        taxed.quote_name,
        taxed.status,
        taxed.currency,
        opportunities.stage as opportunity_stage,

        ---------- numerics
        taxed.conversion_rate,
        taxed.line_item_count,
        taxed.total_quantity,
        taxed.discount_pct,
        taxed.tax_rate,
        taxed.subtotal,
        taxed.discount_amount,
        taxed.tax_amount,
        taxed.shipping_handling,
        taxed.subtotal - taxed.discount_amount + taxed.tax_amount + taxed.shipping_handling
            as grand_total,
        {{ to_usd('taxed.subtotal - taxed.discount_amount + taxed.tax_amount + taxed.shipping_handling',
                  'taxed.conversion_rate') }} as grand_total_usd,
        date_diff('day', cast(taxed.opportunity_created_at as date), cast(taxed.created_at as date))
            as days_from_opportunity_created,

        ---------- booleans
        taxed.is_syncing,
        taxed.status = 'Accepted' and coalesce(opportunities.is_won, false) as is_converted,
        taxed.expiration_date < {{ as_of_date() }} and taxed.status <> 'Accepted' as is_expired,
        coalesce(opportunities.is_won, false) as is_opportunity_won,

        ---------- dates
        taxed.created_at,
        taxed.expiration_date,
        taxed.opportunity_created_at,
        taxed.opportunity_close_date

    from taxed
    left join opportunities
        on opportunities.opportunity_id = taxed.opportunity_id

)

select * from totaled
