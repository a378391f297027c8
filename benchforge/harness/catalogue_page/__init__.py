"""The task catalogue page (``benchforge task catalogue``): one HTML file listing every task of
a catalogue (family, suite, dataset, difficulty, nodes scored) with each agent's latest stored
result.

``collect`` reads the tasks (no gold build: what a task scores is read from its files) and the
run store into :class:`CatalogueEntry` rows; ``render`` turns them into a self-contained page;
``page`` writes it.
"""

from benchforge.harness.catalogue_page.collect import collect_catalogue
from benchforge.harness.catalogue_page.models import AgentResult, CatalogueEntry, DatasetInfo
from benchforge.harness.catalogue_page.page import write_catalogue_page
from benchforge.harness.catalogue_page.render import render_catalogue

__all__ = [
    "AgentResult",
    "CatalogueEntry",
    "DatasetInfo",
    "collect_catalogue",
    "render_catalogue",
    "write_catalogue_page",
]
