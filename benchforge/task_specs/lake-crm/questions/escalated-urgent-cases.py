"""Reference pipeline of escalated-urgent-cases (scorer side only)."""


def case_count(lake):
    return len(lake.table("cases"))


def escalated_cases(lake):
    cases = lake.table("cases")
    escalated = cases["is_escalated"].astype(str).str.lower().isin(["true", "1"])
    return cases[escalated]


def escalated_count(lake):
    return len(escalated_cases(lake))


def answer(lake):
    escalated = escalated_cases(lake)
    urgent = escalated[escalated["priority"].isin(["High", "Critical"])]
    return sorted(str(number) for number in urgent["case_number"])
