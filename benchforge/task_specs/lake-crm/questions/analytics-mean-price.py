"""Reference pipeline of analytics-mean-price (scorer side only)."""

import pandas as pd


def analytics_products(lake):
    products = lake.table("products")
    return products[products["family"] == "Analytics"]


def analytics_count(lake):
    return len(analytics_products(lake))


def answer(lake):
    list_price = pd.to_numeric(analytics_products(lake)["list_price"])
    return list_price.mean()
