"""Reference pipeline of sales-cloud-top-products (scorer side only)."""

import pandas as pd


def sorted_by_list_price(lake):
    products = lake.table("products")
    products = products[products["family"] == "Sales Cloud"].copy()
    products["list_price"] = pd.to_numeric(products["list_price"])
    return products.sort_values(["list_price", "name"], ascending=[False, True])


def sales_cloud_count(lake):
    return len(sorted_by_list_price(lake))


def top_list_prices(lake):
    return [float(p) for p in sorted_by_list_price(lake)["list_price"].head(3)]


def answer(lake):
    top_three = sorted_by_list_price(lake).head(3)
    return [str(name) for name in top_three["name"]]
