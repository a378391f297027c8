-- Fixed planning rates used to compare money across account currencies. They are the rates the
-- domain's money generators are built from (mu(currency) = mu(USD) + ln(units per USD)), so a
-- USD-normalised figure is comparable across countries. No FX table is published in raw.
with

countries as (

    select * from {{ ref('stg_ads__countries') }}

),

pinned_rates as (

    select *
    from (
        values
            ('USD', 1.0, 2),
            ('EUR', 0.92, 2),
            ('GBP', 0.79, 2),
            ('CAD', 1.36, 2),
            ('AUD', 1.52, 2),
            ('MXN', 17.0, 2),
            ('BRL', 5.0, 2),
            ('INR', 83.0, 2),
            ('JPY', 150.0, 0),
            ('KRW', 1330.0, 0)
    -- The alias names the VALUES columns; sqlfluff counts it as an unused table alias.
    ) as rates (currency, units_per_usd, minor_unit_digits)  -- noqa: AL05

),

currencies as (

    select distinct currency from countries

),

final as (

    select
        currencies.currency,
        cast(pinned_rates.units_per_usd as double) as units_per_usd,
        round(1.0 / pinned_rates.units_per_usd, 8) as usd_per_unit,
        cast(pinned_rates.minor_unit_digits as integer) as minor_unit_digits

    from currencies
    left join pinned_rates
        on currencies.currency = pinned_rates.currency

)

select * from final
