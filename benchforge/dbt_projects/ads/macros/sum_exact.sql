{#-
    Order-independent sum of a money (or other fixed-decimal) column: the values are summed as
    DECIMAL, so the total does not depend on the order DuckDB's parallel aggregation adds them
    in (a DOUBLE sum can differ in its last bits from run to run), then returned as DOUBLE.
-#}
{% macro sum_exact(expression, scale=2) -%}
    cast(sum(cast({{ expression }} as decimal(38, {{ scale }}))) as double)
{%- endmacro %}
