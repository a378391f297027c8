"""Judged evaluation: LLM judges whose every awarded point is checked by code.

models      rubric specs, resolved rubrics, verdicts and scores (the shared contract)
client      Judge: a view of the shared LLM client (its ledger: the judge's calls), settings
sanitize    what a judge may read of an output (hidden text and injections removed)
evidence    units, numbers, verbatim quotes, rubric copies, anchors and hedges
structured  JSON replies: schema sent, validated, retried with the error, never guessed
prompts     prompt texts (versioned) and the request format the mock judges parse
replies     the JSON reply models
rubric      judge_rubric / judge_item / compare_modes (hierarchical rubric, DA reports)
gsb         judge_pair / judge_gsb / score_da (Good-Same-Bad against baselines)
architecture  judge_architecture (flat rubric, de_arch blueprints)
            each judge is async (``judge_rubric_async``, ...); the plain names run it on the
            LLM loop for synchronous callers
record      judge_record: the JudgeRecord a judged trial score keeps
hacks       the judged reward-hack catalogue (task_specs/hacks/judged.yaml) and recipes
"""
