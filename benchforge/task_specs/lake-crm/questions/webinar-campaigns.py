"""Reference pipeline of webinar-campaigns (scorer side only)."""


def campaign_count(lake):
    return len(lake.table("campaigns"))


def answer(lake):
    campaigns = lake.table("campaigns")
    webinar_campaigns = campaigns[campaigns["campaign_type"] == "Webinar"]
    return len(webinar_campaigns)
