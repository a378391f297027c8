"""Reference pipeline of top-industry-won (scorer side only). Account ids are joined as
upper(trim(id)): a few are written in lower case or with a trailing space."""


def account_key(ids):
    return ids.astype(str).str.strip().str.upper()


def closed_won(lake):
    opportunities = lake.table("opportunities")
    return opportunities[opportunities["stage"] == "Closed Won"]


def won_count(lake):
    return len(closed_won(lake))


def account_count(lake):
    return len(lake.table("accounts"))


def join_won_to_accounts(lake):
    won = closed_won(lake).assign(account_key=lambda f: account_key(f["account_id"]))
    accounts = lake.table("accounts")
    accounts = accounts.assign(account_key=account_key(accounts["account_id"]))
    accounts = accounts.drop_duplicates("account_key")[["account_key", "industry"]]
    return won.merge(accounts, on="account_key", how="inner")


def joined_won_count(lake):
    return len(join_won_to_accounts(lake))


def answer(lake):
    joined = join_won_to_accounts(lake).dropna(subset=["industry"])
    won_per_industry = joined.groupby("industry").size().reset_index(name="won")
    top = won_per_industry.sort_values(["won", "industry"], ascending=[False, True]).iloc[0]
    return str(top["industry"])
