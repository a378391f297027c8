"""Reference pipeline of emea-countries (scorer side only)."""


def country_count(lake):
    countries = lake.table("countries")
    return len(countries)


def answer(lake):
    countries = lake.table("countries")
    emea_countries = countries[countries["region"] == "EMEA"]
    return sorted(emea_countries["country_code"].astype(str))
