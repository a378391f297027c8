"""A judged trial (``da_open`` reports, ``de_arch`` blueprints) as the browser shows it: every
rubric item with its verdict and the checks behind it, the GSB pairs in both orders, and the
judged text with each evidence quote highlighted where it sits.

The text shown is what the judge read: ``sanitize_output(output).text`` (hidden markup and
text addressed to the evaluator removed), so a highlight is where the code's evidence check
found the quote. Quotes are matched as that check matches them: verbatim, runs of whitespace
aside (``evidence.quote_found``); a quote the record cut (``record.EVIDENCE_CHARS``) is matched
on the part it kept.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Mapping, Sequence
from itertools import pairwise

from pydantic import BaseModel, ConfigDict

from benchforge.core.errors import ArtifactNotFound
from benchforge.core.records import TrialResult
from benchforge.evaluation.judges.breakdown import JudgedItem, JudgedPair, JudgeRecord
from benchforge.evaluation.judges.record import EVIDENCE_CHARS
from benchforge.evaluation.judges.sanitize import sanitize_output
from benchforge.harness.store import RunStore

REPORT_CHARS = 200_000  # the judged text shown; the rest is cut (highlights in it are not shown)
MAX_MATCHES = 50  # occurrences highlighted per quote (a short quote may recur)
CUT_MARK = "…"


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Segment(_View):
    """A run of the judged text: plain (``items`` empty) or inside the evidence of ``items``.
    ``anchors``: the page anchors of the quotes whose first occurrence starts here."""

    text: str
    items: list[str]
    anchors: list[str]


class QuoteView(_View):
    text: str
    found: bool  # in the text the judge saw (whitespace aside)
    anchor: str | None  # the page anchor of its first highlight; None: not found or cut off


class ItemRow(_View):
    item: JudgedItem
    quotes: list[QuoteView]


class JudgedView(_View):
    record: JudgeRecord
    items: list[ItemRow]  # rubric items (de_arch: the flat rubric's)
    pairs: list[JudgedPair]
    old_pairs: list[JudgedItem]  # GSB items of scores stored before pairs were kept
    output: str | None  # the judged file, relative to the workspace
    segments: list[Segment] | None  # None: the judged text is not at hand (see ``note``)
    removed: list[str]  # what the sanitizer took out of the output (hidden markup, ...)
    note: str | None  # why the text is missing, or that it was cut


def squashed(text: str) -> tuple[str, list[int]]:
    """``text`` with every run of whitespace one space (leading whitespace dropped), and for
    each character of the result its index in ``text``."""
    chars: list[str] = []
    where: list[int] = []
    space = True
    for i, c in enumerate(text):
        if c.isspace():
            if not space:
                chars.append(" ")
                where.append(i)
            space = True
        else:
            chars.append(c)
            where.append(i)
            space = False
    return "".join(chars), where


def needle(quote: str) -> str:
    """What a quote is searched as: whitespace squashed, and a quote the record cut (it ends
    in '…' at the record's limit) by the part it kept."""
    if len(quote) >= EVIDENCE_CHARS and quote.endswith(CUT_MARK):
        quote = quote[: -len(CUT_MARK)]
    return " ".join(quote.split())


def find_spans(text: str, quote: str) -> list[tuple[int, int]]:
    """Where ``quote`` occurs in ``text`` (whitespace-insensitively): [start, end) spans of
    ``text``, at most ``MAX_MATCHES``, not overlapping."""
    flat, where = squashed(text)
    wanted = needle(quote)
    spans: list[tuple[int, int]] = []
    if not wanted:
        return spans
    pos = flat.find(wanted)
    while pos >= 0 and len(spans) < MAX_MATCHES:
        spans.append((where[pos], where[pos + len(wanted) - 1] + 1))
        pos = flat.find(wanted, pos + len(wanted))
    return spans


def quote_anchor(item_index: int, quote_index: int) -> str:
    return f"q-{item_index}-{quote_index}"


def highlight(
    text: str, quotes: Mapping[str, Sequence[str]], limit: int = REPORT_CHARS
) -> tuple[list[Segment], dict[tuple[str, int], bool]]:
    """``text`` (cut at ``limit``) split into segments, each quote's occurrences marked with
    its item id; and for each (item id, quote index) whether the quote was found (in the
    whole text, cut or not)."""
    found: dict[tuple[str, int], bool] = {}
    spans: list[tuple[int, int, str, str | None]] = []  # start, end, item id, anchor
    for position, (item_id, item_quotes) in enumerate(quotes.items()):
        for q, quote in enumerate(item_quotes):
            where = find_spans(text, quote)
            found[(item_id, q)] = bool(where)
            for n, (start, end) in enumerate(where):
                if start < limit:
                    anchor = quote_anchor(position, q) if n == 0 else None
                    spans.append((start, min(end, limit), item_id, anchor))
    shown = text[:limit]
    cuts = sorted({0, len(shown), *(s for s, *_ in spans), *(e for _, e, *_ in spans)})
    segments: list[Segment] = []
    for start, end in pairwise(cuts):
        covering = [i for s, e, i, _ in spans if s <= start and end <= e]
        segments.append(
            Segment(
                text=shown[start:end],
                items=list(dict.fromkeys(covering)),
                anchors=[a for s, _, _, a in spans if a is not None and s == start],
            )
        )
    return segments, found


def judged_output(run: RunStore | None, result: TrialResult, path: str) -> str | None:
    """The judged file as the agent left it: inline in the result, or in the trial's
    submission archive (read from ``run``); None when it is in neither."""
    if path in result.outputs:
        return result.outputs[path]
    if run is None or result.submission is None or path not in result.output_files:
        return None
    try:
        archive = run.store.get_bytes(result.submission)
    except ArtifactNotFound:
        return None
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        try:
            member = tar.getmember(path)
        except KeyError:
            return None
        data = tar.extractfile(member) if member.isfile() else None
        return data.read().decode("utf-8", errors="replace") if data is not None else None


def judged_view(record: JudgeRecord, output: str | None) -> JudgedView:
    """The view of one judged trial; ``output``: the judged file's text (None: not at hand)."""
    rubric = [i for i in record.items if i.kind != "gsb"]
    quotes = {i.id: i.evidence for i in rubric if i.evidence}
    segments: list[Segment] | None = None
    removed: list[str] = []
    found: dict[tuple[str, int], bool] = {}
    note = None
    if not record.judges:
        note = "Nothing was judged: the output is empty or missing (scored 0, no judge call)."
    elif output is None:
        note = (
            "The judged text is not at hand: this score was stored before it named the judged "
            "file (`benchforge score-run RUN --rescore` records it)."
            if record.output is None
            else f"The judged file {record.output} is not among the trial's outputs: the agent "
            "did not write it, or it is in neither the result nor its archive."
        )
    else:
        sanitized = sanitize_output(output)
        seen, removed = sanitized.text, list(sanitized.removed)
        segments, found = highlight(seen, quotes)
        if len(seen) > REPORT_CHARS:
            note = f"Only the first {REPORT_CHARS:,} of {len(seen):,} characters are shown."
    position = {item_id: n for n, item_id in enumerate(quotes)}
    shown = {a for s in segments or [] for a in s.anchors}
    rows = []
    for item in rubric:
        views = []
        for q, quote in enumerate(item.evidence):
            anchor = quote_anchor(position[item.id], q)
            views.append(
                QuoteView(
                    text=quote,
                    found=found.get((item.id, q), False),
                    anchor=anchor if anchor in shown else None,
                )
            )
        rows.append(ItemRow(item=item, quotes=views))
    return JudgedView(
        record=record,
        items=rows,
        pairs=list(record.gsb_pairs),
        old_pairs=[] if record.gsb_pairs else [i for i in record.items if i.kind == "gsb"],
        output=record.output,
        segments=segments,
        removed=removed,
        note=note,
    )
