"""``da_open`` tasks: open data-analysis questions judged on a hierarchical rubric.

- ``spec``: the task spec (``DaOpenTask``: marts, anchors, rubric, reference, baselines);
- ``analysis``: the analysis database an agent gets (the task's marts out of the gold build);
- ``anchors``: the values the rubric cites, computed by SQL on that database;
- ``render``: rubric, reference and baselines rendered with one dataset's anchor values;
- ``gold``: ``DaGold``, all of the above for one dataset (what reports are judged against);
- ``checks``: authoring problems found without data (when a task is loaded).

The family itself (materials, scoring through the judges, verification) is
:mod:`benchforge.evaluation.families.da`. Modules are imported by path, not re-exported here,
so loading a spec does not pull in the gold-build machinery.
"""
