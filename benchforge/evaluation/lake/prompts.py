"""Prompt texts of the two lake judges (paraphrase, pipeline design), in the judges' request
format (``judges.prompts``): a JSON request first, then the untrusted material, delimited."""

from __future__ import annotations

from collections.abc import Sequence

from benchforge.evaluation.judges.client import Message
from benchforge.evaluation.judges.models import content_hash
from benchforge.evaluation.judges.prompts import MATERIAL_RULES, delimit, request_block

PARAPHRASE_SYSTEM = f"""\
You decide whether a data system's answer to a question states the same thing as the reference \
answer. Same means: a reader who knows the reference would accept the answer as correct. \
Wording, word order, abbreviations and letter case may differ; a different entity, a \
different quantity, extra qualifications that change the meaning, or a list of alternatives \
are not the same.

{MATERIAL_RULES}

Reply with one JSON object and nothing else."""

PARAPHRASE_USER = """\
The request below holds the question and the reference answer.

{request}

{material}

Reply with JSON: {{"same_meaning": true or false, "reason": "<one sentence>"}}."""

PIPELINE_SYSTEM = f"""\
You review the code of a data pipeline written to answer a question over a data lake. For each \
key functionality listed in the request, decide whether the code itself implements it: the \
operation is carried out on the data (a comment, a name or a print saying so is not enough). \
Judge each functionality on its own, in the order given.

{MATERIAL_RULES}

Reply with one JSON object and nothing else."""

PIPELINE_USER = """\
Judge the key functionalities listed in the request below, in order.

{request}

{material}

Reply with JSON: {{"implemented": [true or false, ...], "reason": "<one sentence>"}} with \
exactly one boolean per functionality, in the request's order."""

PARAPHRASE_PROMPT_VERSION = content_hash([PARAPHRASE_SYSTEM, PARAPHRASE_USER])
PIPELINE_PROMPT_VERSION = content_hash([PIPELINE_SYSTEM, PIPELINE_USER])


def paraphrase_messages(*, question: str, gold: str, answer: str) -> list[Message]:
    request = request_block({"task": "paraphrase", "question": question, "reference": gold})
    return [
        {"role": "system", "content": PARAPHRASE_SYSTEM},
        {
            "role": "user",
            "content": PARAPHRASE_USER.format(request=request, material=delimit("ANSWER", answer)),
        },
    ]


def pipeline_messages(*, question: str, functionalities: Sequence[str], code: str) -> list[Message]:
    request = request_block(
        {
            "task": "pipeline_design",
            "question": question,
            "functionalities": list(functionalities),
        }
    )
    return [
        {"role": "system", "content": PIPELINE_SYSTEM},
        {
            "role": "user",
            "content": PIPELINE_USER.format(request=request, material=delimit("PIPELINE", code)),
        },
    ]
