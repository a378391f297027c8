"""Reference pipeline of won-usd-2024 (scorer side only)."""

import pandas as pd


def opportunity_count(lake):
    return len(lake.table("opportunities"))


def closed_won_usd(lake):
    opportunities = lake.table("opportunities")
    return opportunities[
        (opportunities["stage"] == "Closed Won") & (opportunities["currency"] == "USD")
    ]


def won_usd_count(lake):
    return len(closed_won_usd(lake))


def closed_in_2024(lake):
    won = closed_won_usd(lake)
    close_date = pd.to_datetime(won["close_date"], errors="coerce")
    return won[close_date.dt.year == 2024]


def won_usd_2024_count(lake):
    return len(closed_in_2024(lake))


def answer(lake):
    amount = pd.to_numeric(closed_in_2024(lake)["amount"])
    return round(float(amount.sum()), 2)
