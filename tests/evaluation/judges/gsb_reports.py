"""Reports for the Good-Same-Bad tests, with their mock-judge features (readability, depth).

candidate  readability 8 (4 headings, 4 list items, a table)  depth 5 (9 numbers, 2 reasons)
weak       readability 0                                       depth 0
numbers    readability 8 (same layout)                         depth 8.33 (19 numbers, 2 reasons)
draft      readability 1                                       depth 1 (3 numbers)
Candidate vs weak: good / good; vs numbers: same / bad; vs draft: (the test's position-biased
judge on readability) / good.
"""

CANDIDATE = """\
# Churn review
## Findings
- Churn reached 14.2% in the quarter.
- EMEA churn was 21.5%.
- APAC churn was 11.0%.
- Revenue at risk totals $1.25M.
## Regions
| region | churn |
|---|---|
| NA | 9.8% |
## Actions
Churn rose because prices went up 6% in March.
We recommend a 3-month loyalty discount for 250 accounts, starting with 40 key ones.
"""

WEAK = """\
Churn went up last quarter and some regions were worse than others. The team should look at
it again next time and see what can be done about customers leaving.
"""

NUMBERS = """\
# Churn review
## Findings
- Churn reached 14.2% in the quarter, 13.1% a year ago and 12.4% two years ago.
- EMEA churn was 21.5% against 19.0% and 18.2% before.
- APAC churn was 11.0% against 10.4% and 9.9% before.
- Revenue at risk totals $1.25M, up from $1.02M and $0.87M.
## Regions
| region | churn | accounts |
|---|---|---|
| NA | 9.8% | 4,210 |
| LATAM | 16.3% | 1,180 |
## Actions
Churn rose because prices went up 6% in March.
We recommend a 3-month loyalty discount for 250 accounts.
"""

DRAFT = """\
# Draft
Churn was 14.2% overall, 21.5% in EMEA and 11.0% in APAC.
"""
