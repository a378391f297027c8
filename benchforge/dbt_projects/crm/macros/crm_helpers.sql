{#- Helpers shared by the crm models. Each one is a small SQL expression, documented here once. -#}

{#- A foreign key as published by spreadsheet imports (key_drift): trailing spaces and lower case. -#}
{% macro normalize_key(column) -%}
    upper(trim({{ column }}))
{%- endmacro %}

{#- A number published as text (type_coercion): '1,234,567.00', '523.40 USD' or a plain '1234.5'. -#}
{% macro parse_number(column) -%}
    try_cast(replace(regexp_replace(trim({{ column }}), '\s*[A-Za-z]+$', ''), ',', '') as double)
{%- endmacro %}

{#- Monetary value: rounded to cents and held as an exact decimal, so sums do not depend on row order. -#}
{% macro to_money(expression) -%}
    cast(round({{ expression }}, 2) as decimal(18, 2))
{%- endmacro %}

{#- Amount in a currency -> USD (the corporate currency); rate = units of the currency per 1 USD. -#}
{% macro to_usd(amount, conversion_rate) -%}
    cast(round(cast({{ amount }} as double) / nullif({{ conversion_rate }}, 0), 2) as decimal(18, 2))
{%- endmacro %}

{#- The snapshot day (var as_of_date) and the first instant after it (exclusive end of the snapshot). -#}
{% macro as_of_date() -%}
    cast('{{ var("as_of_date") }}' as date)
{%- endmacro %}

{% macro as_of_end_ts() -%}
    (cast('{{ var("as_of_date") }}' as timestamp) + interval 1 day)
{%- endmacro %}

{#- Opportunity stage -> its position in the sales process (1 = Prospecting ... 9 = Closed Won, 10 = Closed Lost). -#}
{% macro stage_sort_order(stage) -%}
    case {{ stage }}
        when 'Prospecting' then 1
        when 'Qualification' then 2
        when 'Needs Analysis' then 3
        when 'Value Proposition' then 4
        when 'Id. Decision Makers' then 5
        when 'Perception Analysis' then 6
        when 'Proposal/Price Quote' then 7
        when 'Negotiation/Review' then 8
        when 'Closed Won' then 9
        when 'Closed Lost' then 10
    end
{%- endmacro %}

{#- Case priority -> SLA in hours (Critical 4, High 24, Medium 72, Low 168). -#}
{% macro case_sla_hours(priority) -%}
    case {{ priority }}
        when 'Critical' then 4
        when 'High' then 24
        when 'Medium' then 72
        when 'Low' then 168
    end
{%- endmacro %}
