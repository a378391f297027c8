-- The east region's company profiles, cleaned by the macro shared by the four regions
-- (macros/staging/stg_enterprise__company_profiles.sql: the stressors it handles).
{{ stg_enterprise__company_profiles('east') }}
