"""What each ds-star role is told. Each call is a fresh conversation (a system prompt naming
the role, one user message), so a role never depends on an earlier call's context, only on
what the agent chose to pass: descriptions, the plan, the code and its latest result."""

from __future__ import annotations

from collections.abc import Sequence

SCRIPT_RULES = (
    "The script runs alone with the data folder as its working directory (read-only): name "
    "files by the paths listed, relative to it. There is no network and nothing is kept from "
    "earlier runs. pandas, numpy and pyarrow are available. Reply with one complete Python "
    "script in a ```python block."
)

ANALYZER = (
    "You are the analyzer of a data-science agent. You write a Python script that describes "
    "one data file so that a colleague who cannot open it knows how to load and use it: its "
    "format, its structure (columns and their types, keys, nesting, several tables in one "
    "sheet), a few sample rows or entries, and anything unusual (units, missing values, "
    "notes). The file's path is the script's first argument (sys.argv[1]). " + SCRIPT_RULES
)
PLANNER = (
    "You are the planner of a data-science agent that answers a question over data files by "
    "growing a plan one simple step at a time. You give the next step only: one short "
    "instruction that can be checked by running code, in plain text, no code."
)
CODER = (
    "You are the coder of a data-science agent. You write one script that carries out every "
    "step of the plan, in order, and prints what the steps produce (the values, not just that "
    "it ran). When base code is given, extend it rather than start over. " + SCRIPT_RULES
)
VERIFIER = (
    "You are the verifier of a data-science agent. Judge whether the plan, as implemented by "
    "the code and shown by its output, is enough to answer the question. Reply 'Yes' when it "
    "is sufficient, 'No' when it is not, then one sentence why."
)
ROUTER = (
    "You are the router of a data-science agent whose plan is not yet sufficient. If one of "
    "the steps is wrong (a wrong file, a wrong filter, a wrong assumption), reply 'Step N is "
    "wrong' with the number of the first wrong step; if the steps are right but more are "
    "needed, reply 'Add Step'. Then one sentence why."
)
DEBUGGER = (
    "You are the debugger of a data-science agent. A script failed; fix it so that it does "
    "what it was meant to do. Keep what works. " + SCRIPT_RULES
)
SUMMARIZER = (
    "You summarize a Python error for a colleague who will fix the script: the exception, the "
    "line of the script that raised it and the values involved, in a few lines."
)
FINALIZER = (
    "You are the finalizer of a data-science agent. Given the code that answers the question "
    "and its output, write a script that computes the answer again and prints only the final "
    "answer in the required format. " + SCRIPT_RULES
)


def files_block(descriptions: Sequence[tuple[str, str]]) -> str:
    """The data files as the roles see them: each path with its description (or none, when
    the analyzer is ablated)."""
    if not descriptions:
        return "(no data files)"
    parts = []
    for path, description in descriptions:
        parts.append(f"## {path}\n{description.strip()}" if description else f"## {path}")
    return "\n\n".join(parts)


def plan_block(plan: Sequence[str]) -> str:
    if not plan:
        return "There are no steps yet."
    return "\n".join(f"Step {i}: {step}" for i, step in enumerate(plan, start=1))


def analyzer_user(path: str) -> str:
    return f"Describe the data file {path} (its path is sys.argv[1])."


def planner_user(question: str, files: str, plan: Sequence[str], latest: str | None) -> str:
    text = f"# Question\n{question}\n\n# Data files\n{files}\n\n# Plan so far\n{plan_block(plan)}"
    if latest is not None:
        text += f"\n\n# Latest result\n{latest}"
    what = "the first step" if not plan else "the next step"
    return text + f"\n\nGive {what} only."


def coder_user(files: str, plan: Sequence[str], base_code: str | None) -> str:
    text = f"# Data files\n{files}\n\n# Plan\n{plan_block(plan)}"
    if base_code is not None:
        text += f"\n\n# Base code (implements the steps before the last)\n```python\n{base_code}```"
    return text + "\n\nWrite the script implementing every step of the plan."


def verifier_user(question: str, plan: Sequence[str], code: str, result: str) -> str:
    return (
        f"# Question\n{question}\n\n# Plan\n{plan_block(plan)}\n\n# Code\n```python\n{code}```"
        f"\n\n# Output\n{result}\n\nIs the plan sufficient to answer the question?"
    )


def router_user(question: str, files: str, plan: Sequence[str], result: str) -> str:
    return (
        f"# Question\n{question}\n\n# Data files\n{files}\n\n# Plan\n{plan_block(plan)}\n\n"
        f"# Output of its code\n{result}\n\nIs a step wrong, or should a step be added?"
    )


def debugger_user(code: str, error: str, files: str | None) -> str:
    text = f"# Script\n```python\n{code}```\n\n# Error\n{error}"
    if files is not None:
        text += f"\n\n# Data files\n{files}"
    return text + "\n\nReply with the fixed script."


def summarizer_user(error: str) -> str:
    return f"# Error output\n{error}\n\nSummarize it."


def finalizer_user(question: str, files: str, code: str, result: str, guidelines: str) -> str:
    return (
        f"# Question\n{question}\n\n# Data files\n{files}\n\n# Code\n```python\n{code}```\n\n"
        f"# Its output\n{result}\n\n# Answer format\n{guidelines}\n\n"
        "Write the script that prints the final answer."
    )
