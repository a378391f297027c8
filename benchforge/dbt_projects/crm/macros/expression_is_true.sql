{#- Fails for every row where the boolean SQL expression is false (NULL counts as false). -#}
{% test expression_is_true(model, expression, where=none) %}
select *
from {{ model }}
where not coalesce(({{ expression }}), false)
{%- if where %} and ({{ where }}){% endif %}
{% endtest %}
