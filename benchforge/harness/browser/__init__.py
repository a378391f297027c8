"""The run browser (``benchforge view RUN``): a static HTML site of a stored run.

``load`` reads the run store into view models (trial rows, trajectories, the per-node diffs
kept in each ``TrialScore``, the leaderboard of the stored scores); ``render`` turns them into
self-contained pages; ``site`` writes the folder and serves it on the loopback interface.
"""

from benchforge.harness.browser.load import RunView, TrialRow, TrialView, load_run, trial_page
from benchforge.harness.browser.render import index_page, trial_page_html
from benchforge.harness.browser.site import Site, serve, write_site

__all__ = [
    "RunView",
    "Site",
    "TrialRow",
    "TrialView",
    "index_page",
    "load_run",
    "serve",
    "trial_page",
    "trial_page_html",
    "write_site",
]
