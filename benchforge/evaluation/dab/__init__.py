"""Answer validators for ``dab_query`` tasks (DataAgentBench style): an agent answers a question
over several databases in free text, and a typed validator decides whether the answer states the
gold value computed by code.

- ``normalize``: the text every validator reads (markdown stripped, unicode folded, thousands
  separators joined) and whole-token phrase search over it;
- ``quantities``: the numbers an answer writes, with their scale words and units;
- ``validators``: the validator kinds (``ExactValue``, ``ValueSet``, ``NumberWithin``,
  ``OrderedList``), each with a ``VERSION`` recorded in every ``Verdict``.

The rules are written down in ``docs/answer-validators.md``. Plain Python: no Prefect, no I/O.
"""
