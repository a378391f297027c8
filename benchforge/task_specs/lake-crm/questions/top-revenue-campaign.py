"""Reference pipeline of top-revenue-campaign (scorer side only)."""

import pandas as pd


def campaign_count(lake):
    return len(lake.table("campaigns"))


def max_expected_revenue(lake):
    campaigns = lake.table("campaigns")
    return pd.to_numeric(campaigns["expected_revenue"]).max()


def answer(lake):
    campaigns = lake.table("campaigns")
    revenue = pd.to_numeric(campaigns["expected_revenue"])
    top_campaign = campaigns.loc[revenue.idxmax()]
    return str(top_campaign["name"])
