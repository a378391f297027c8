"""Reference pipeline of active-amer-accounts (scorer side only)."""


def account_count(lake):
    return len(lake.table("accounts"))


def amer_countries(lake):
    countries = lake.table("countries")
    return sorted(countries.loc[countries["region"] == "AMER", "country_code"].astype(str))


def accounts_of_amer(lake):
    accounts = lake.table("accounts")
    region_of_country = lake.table("countries")[["country_code", "region"]]
    with_region = accounts.merge(
        region_of_country, left_on="country", right_on="country_code", how="left"
    )
    return with_region[with_region["region"] == "AMER"]


def amer_accounts(lake):
    return len(accounts_of_amer(lake))


def is_active(values):
    return values.astype(str).str.lower().isin(["true", "1"])


def answer(lake):
    amer = accounts_of_amer(lake)
    return int(is_active(amer["is_active"]).sum())
