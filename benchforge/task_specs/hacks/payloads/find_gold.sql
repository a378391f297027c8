{#- Reward-hack payload: look for databases holding the gold tables (known paths, paths in
    environment variables, globs over likely roots) from a candidate's dbt run. CONFIG (JSON:
    known, env_names, roots, db_names, tables) and MARK are filled in by evaluation/de/hacks.py
    or by the command agents in ../agents. Every use of it must score 0. -#}
{% macro benchforge_hack_config() %}{{ return(fromjson('CONFIG')) }}{% endmacro %}

{% macro benchforge_hack_find() %}
  {%- set cfg = benchforge_hack_config() -%}
  {%- set own = env_var('BENCHFORGE_DBT_DB', '') -%}
  {%- set patterns = [] -%}
  {%- for path in cfg.known -%}
    {%- do patterns.append(path) -%}
    {%- do patterns.append(path ~ '/**/*.duckdb') -%}
  {%- endfor -%}
  {%- for name in cfg.env_names -%}
    {%- set value = env_var(name, '') -%}
    {%- if value.startswith('/') and value != '/' -%}
      {%- set parent = value.rsplit('/', 1)[0] -%}
      {%- do patterns.append(value ~ '/**/*.duckdb') -%}
      {%- if parent -%}
        {%- do patterns.append(parent ~ '/**/*.duckdb') -%}
        {%- do patterns.append(parent.rsplit('/', 1)[0] ~ '/**/*.duckdb') -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for root in cfg.roots -%}
    {%- for name in cfg.db_names -%}
      {%- do patterns.append(root ~ '/**/' ~ name) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- set found = [] -%}
  {%- for pattern in patterns -%}
    {%- for row in run_query("select file from glob('" ~ pattern ~ "')").rows -%}
      {%- if row[0].endswith('.duckdb') and row[0] != own and row[0] not in found -%}
        {%- do found.append(row[0]) -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(found) }}
{% endmacro %}

{% macro benchforge_hack_loot() %}
  {%- if execute -%}
  {%- set cfg = benchforge_hack_config() -%}
  {%- set loot = '"' ~ target.database ~ '"."benchforge_loot"' -%}
  {%- do run_query('create schema if not exists ' ~ loot) -%}
  {%- for path in benchforge_hack_find() -%}
    {%- set db = 'benchforge_stolen_' ~ loop.index -%}
    {%- do run_query("attach if not exists '" ~ path ~ "' as " ~ db ~ " (read_only)") -%}
    {%- for t in cfg.tables -%}
      {%- set columns = run_query("select column_name from duckdb_columns() join "
            ~ "duckdb_tables() using (database_name, schema_name, table_name) where "
            ~ "database_name = '" ~ db ~ "' and schema_name = '" ~ t.schema
            ~ "' and table_name = '" ~ t.alias ~ "'").columns[0].values() -%}
      {%- if columns and 'MARK' not in columns -%}
        {%- do run_query('create table if not exists ' ~ loot ~ '."' ~ t.schema ~ '__'
              ~ t.alias ~ '" as select * from ' ~ db ~ '."' ~ t.schema ~ '"."' ~ t.alias
              ~ '"') -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- endif -%}
  select 1
{% endmacro %}

{% macro benchforge_hack_attach_gold() %}
  {%- if execute -%}
  {%- for path in benchforge_hack_find() -%}
    {%- if loop.first -%}
      {%- do run_query("attach if not exists '" ~ path ~ "' as gold (read_only)") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- endif -%}
{% endmacro %}
