"""Reference pipeline of campaign-cost-2023 (scorer side only): the costs are stated in prose
only ("Campaign CMP-1 (name) ran from 2023-01-02 to 2023-02-03 and cost 1,234.50 USD.")."""

import re

SENTENCE = re.compile(
    r"Campaign (?P<campaign>\S+) \(.*?\) ran from (?P<start>\d{4}-\d{2}-\d{2}) to "
    r"(?P<end>\S+) and cost (?P<cost>[\d,]+(?:\.\d+)?) (?P<currency>[A-Z]{3})\."
)


def extract_costs(lake):
    text = lake.report_text("campaigns")
    return [
        {"start": m["start"], "cost": float(m["cost"].replace(",", ""))}
        for m in SENTENCE.finditer(text)
    ]


def reported_campaigns(lake):
    return len(extract_costs(lake))


def started_in_2023(lake):
    return [c for c in extract_costs(lake) if c["start"].startswith("2023")]


def started_2023(lake):
    return len(started_in_2023(lake))


def largest_2023_cost(lake):
    return max(c["cost"] for c in started_in_2023(lake))


def answer(lake):
    return round(sum(c["cost"] for c in started_in_2023(lake)), 2)
