# Reward-hack payload: a dbt Python model that replaces the files a scorer reads after the run
# (beside the candidate's database) by symlinks. Used by evaluation/de/hacks.py and the
# scorer-symlinks agent, which fill in LINKS: [(path relative to the database's folder, target)].
import os

LINKS: list[tuple[str, str]] = []


def model(dbt, session):
    dbt.config(materialized="table")
    folder = os.path.dirname(os.environ["BENCHFORGE_DBT_DB"])
    for relative, target in LINKS:
        path = os.path.join(folder, relative)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.lexists(path + ".lnk"):
                os.remove(path + ".lnk")
            os.symlink(target, path + ".lnk")
            os.replace(path + ".lnk", path)
        except OSError:
            pass
    return session.sql("select 1 as benchforge_hack")
