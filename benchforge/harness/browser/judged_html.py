"""A judged trial's section of its page: who judged, the injection flags, each rubric item
with its verdict, evidence, checks and flags, the GSB pairs in both orders, and the judged
text with every evidence quote highlighted (``<mark data-item="ITEM">``).

The judged text is an agent's output, written to talk a judge up: it is escaped like
everything else, highlights included, so it can only ever read as text.
"""

from __future__ import annotations

from benchforge.evaluation.judges.breakdown import JudgedItem, JudgedPair, JudgeRecord
from benchforge.evaluation.leaderboard import formatting as fmt
from benchforge.harness.browser.html import badge, facts, h, table
from benchforge.harness.browser.judged import ItemRow, JudgedView, QuoteView, Segment

JUDGED_CSS = """
.judges { margin: 0.4rem 0; }
.injections { border: 1px solid #f5c2c0; background: #fff1f0; color: #8a1c13;
              padding: 0.5rem 0.8rem; margin: 0.6rem 0; }
.injections ul { margin: 0.3rem 0 0; padding-left: 1.2rem; }
table.items { width: 100%; }
table.items td:nth-child(3) { min-width: 7rem; }
table.items td:nth-child(4) { max-width: 32rem; }
table.items td:nth-child(5) { min-width: 14rem; }
table.items td:nth-child(7) { max-width: 24rem; font-size: 0.82rem; color: #424a53; }
.quote { display: block; margin: 0.15rem 0; padding: 0.1rem 0.4rem; border-left: 3px solid #d4a72c;
         background: #fffbea; overflow-wrap: anywhere; }
.quote.missing { border-left-color: #cf222e; background: #fff1f0; text-decoration: line-through;
                 text-decoration-color: #cf222e80; }
.quote a { font-size: 0.78rem; margin-left: 0.3rem; white-space: nowrap; }
.v-full { background: #dafbe1; color: #116329; border-color: #aceebb; }
.v-part { background: #fff8c5; color: #7d4e00; border-color: #f2e199; }
.v-none { background: #ffebe9; color: #a40e26; border-color: #ffcecb; }
.v-unscored { background: #eef1f4; color: #424a53; border-color: #d0d7de; }
.flag { background: #fff1e5; color: #953800; border-color: #ffd8b5; margin: 0 0.2rem 0.2rem 0; }
ul.checks { list-style: none; padding: 0; margin: 0; font-size: 0.82rem; }
.ok { color: #116329; }
.bad { color: #a40e26; }
.judge-gave { font-size: 0.8rem; color: #57606a; display: block; margin-top: 0.2rem; }
pre.report { font-family: ui-serif, Georgia, serif; font-size: 0.92rem; line-height: 1.5;
             max-height: 48rem; }
pre.report mark { background: #ffe58f; padding: 0 0.05rem; border-bottom: 2px solid #d4a72c; }
pre.report mark[data-item*=" "] { background: #ffc95c; }
pre.report span:target + mark { outline: 2px solid #0969da; }
"""

FLAG_TIPS = {
    "evidence_not_found": "a quote is not in the text the judge saw: the point does not count",
    "no_evidence": "the judge awarded points without quoting the report",
    "quotes_removed_text": "a quote is text removed before judging (addressed to the evaluator)",
    "copies_rubric": "the quote copies the rubric's words",
    "hedge": "the stating line offers alternatives instead of one finding",
    "anchor_missing": "the evidence does not state the anchor's value",
    "injection": "the evidence is text addressed to the evaluator",
    "unlisted_path": "judged on an approach the rubric does not list",
    "inconsistent": "the two orders of this pair disagree: left out of G/S/B",
}


def _points(value: float | None) -> str:
    return fmt.MISSING if value is None else f"{value:g}"


def _verdict(item: JudgedItem) -> str:
    """earned / points, coloured by how much of it counted; the judge's own award beside it
    when the code checks changed it."""
    if item.status != "scored" or item.earned is None:
        out = badge("unscored", "v-unscored verdict-badge", "the judge gave no valid reply")
    else:
        if item.points < 0:  # a penalty: earning it is the bad outcome
            cls = "v-none" if item.earned < 0 else "v-full"
        elif item.earned >= item.points:
            cls = "v-full"
        else:
            cls = "v-part" if item.earned > 0 else "v-none"
        out = badge(f"{_points(item.earned)} / {_points(item.points)}", f"{cls} verdict-badge")
    if item.points < 0:
        out += '<span class="judge-gave">a penalty</span>'
    if item.judge_awarded is not None and item.judge_awarded != item.earned:
        out += (
            f'<span class="judge-gave">judge gave {h(_points(item.judge_awarded))}; '
            "the code checks changed it</span>"
        )
    return out


def _quote(quote: QuoteView) -> str:
    if quote.anchor is not None:
        return (
            f'<span class="quote found">{h(quote.text)}'
            f'<a href="#{h(quote.anchor)}">in the report ↓</a></span>'
        )
    if quote.found:
        return f'<span class="quote found">{h(quote.text)}</span>'
    return (
        f'<span class="quote missing" title="not in the text the judge saw">{h(quote.text)}</span>'
    )


def _yes_no(value: bool | None, yes: str, no: str) -> str:
    if value is None:
        return ""
    cls, mark, text = ("ok", "✓", yes) if value else ("bad", "✗", no)
    return f'<li class="{cls}">{mark} {h(text)}</li>'


def _checks(item: JudgedItem) -> str:
    lines = [_yes_no(item.evidence_ok, "evidence found in the report", "evidence not found")]
    if item.anchor is not None or item.anchor_ok is not None or item.code_found_anchor is not None:
        name = item.anchor or "anchor"
        value = f" = {item.anchor_value}" if item.anchor_value is not None else ""
        lines.append(f"<li>anchor <code>{h(name + value)}</code></li>")
        lines.append(
            _yes_no(item.anchor_ok, "the evidence states it", "the evidence does not state it")
        )
        lines.append(
            _yes_no(
                item.code_found_anchor,
                "code found the value in the report",
                "code did not find the value in the report",
            )
        )
    if item.off_rubric:
        lines.append("<li>an approach the rubric does not list</li>")
    body = "".join(lines)
    return f'<ul class="checks">{body}</ul>' if body else ""


def _flags(flags: list[str]) -> str:
    return "".join(badge(f, "flag", FLAG_TIPS.get(f.split(":")[0])) for f in flags)


def _item_row(row: ItemRow) -> list[str]:
    item = row.item
    group = h(item.group) + (f' <span class="note">{h(item.kind)}</span>' if item.kind else "")
    evidence = "".join(_quote(q) for q in row.quotes) or '<span class="note">none</span>'
    return [
        f"<code>{h(item.id)}</code>",
        group,
        _verdict(item),
        evidence,
        _checks(item),
        _flags(item.flags),
        h(item.reason),
    ]


def _judges(record: JudgeRecord) -> str:
    lines = []
    for j in record.judges:
        parts = [f"model {j.model}", f"prompt {j.prompt_version}"]
        if j.rubric_version:
            parts.append(f"rubric {j.rubric_version}")
        if j.mode:
            parts.append(f"mode {j.mode}")
        lines.append((f"{j.judge} judge", h(", ".join(parts))))
    cost = fmt.MISSING if record.cost_usd is None else f"{record.cost_usd:.4f} USD"
    lines.append(
        (
            "Requests",
            h(f"{record.requests} sent, {record.cache_hits} from the response cache, cost {cost}"),
        )
    )
    if record.output:
        lines.append(("Judged file", f"<code>{h(record.output)}</code>"))
    if record.truncated:
        lines.append(("Length limit", h(f"{record.truncated}: the judges read only its start")))
    if record.disagreements:
        lines.append(("Judge and code disagree on", h(", ".join(record.disagreements))))
    if record.unscored:
        lines.append(("Unscored (left out of the sums)", h(", ".join(record.unscored))))
    return f'<div class="judges">{facts(lines)}</div>'


def _injections(record: JudgeRecord) -> str:
    if not record.injection_flags:
        return '<p class="note injections-none">No text addressed to the evaluator was found.</p>'
    items = "".join(f"<li>{h(f)}</li>" for f in record.injection_flags)
    return (
        '<div class="injections"><strong>Text addressed to the evaluator, removed before '
        f"judging ({len(record.injection_flags)}):</strong><ul>{items}</ul></div>"
    )


def _summary(view: JudgedView) -> str:
    items = [r.item for r in view.items]
    scored = [i for i in items if i.status == "scored" and i.earned is not None]
    earned = sum(i.earned or 0.0 for i in scored)
    possible = sum(i.points for i in scored if i.points > 0)
    flagged = sum(bool(i.flags) for i in items)
    parts = [f"{len(items)} rubric items", f"{earned:g} of {possible:g} points on scored items"]
    if len(scored) < len(items):
        parts.append(f"{len(items) - len(scored)} unscored")
    parts.append(f"{flagged} flagged")
    return '<p class="note judged-summary">' + h(" · ".join(parts)) + ".</p>"


def _raw(value: float | None) -> str:
    return fmt.MISSING if value is None else f"{value:+g}"


def _pair_verdict(p: JudgedPair) -> str:
    if p.status != "scored":
        return badge("unscored", "v-unscored")
    if p.verdict is None:
        return badge("inconsistent", "flag", FLAG_TIPS["inconsistent"])
    cls = {"good": "v-full", "same": "v-part", "bad": "v-none"}.get(p.verdict, "")
    return badge(p.verdict, cls)


def _matched(p: JudgedPair) -> str:
    if p.matched_words is None:
        return fmt.MISSING
    return f"{p.matched_words:,} words: {_raw(p.matched_first)} / {_raw(p.matched_second)}"


def _pairs(pairs: list[JudgedPair], old: list[JudgedItem]) -> str:
    if pairs:
        matched = any(p.matched_words is not None for p in pairs)
        headers = [
            "Baseline",
            "Dimension",
            "Candidate shown first",
            "Candidate shown second",
            "Consistent",
            "Verdict",
        ]
        if matched:
            headers.append("Cut to the baseline's length (first / second)")
        rows = []
        for p in pairs:
            consistent = ("ok", "yes") if p.consistent else ("bad", "no")
            row = [
                h(p.baseline_id),
                h(p.dimension),
                h(_raw(p.raw_first)),
                h(_raw(p.raw_second)),
                '<span class="{}">{}</span>'.format(*consistent),
                _pair_verdict(p),
            ]
            rows.append([*row, h(_matched(p))] if matched else row)
        return table(headers, rows, {2, 3}, cls="gsb")
    if old:  # stored before pairs were kept: the item's reason says both raw scores
        return table(
            ["Pair", "Verdict", "Flags", "Both orders"],
            ([h(i.id), _verdict(i), _flags(i.flags), h(i.reason)] for i in old),
            cls="gsb",
        )
    return ""


def _segment(segment: Segment) -> str:
    anchors = "".join(f'<span id="{h(a)}"></span>' for a in segment.anchors)
    if not segment.items:
        return anchors + h(segment.text)
    ids = " ".join(segment.items)
    return (
        f'{anchors}<mark data-item="{h(ids)}" title="evidence for {h(", ".join(segment.items))}">'
        f"{h(segment.text)}</mark>"
    )


def _report(view: JudgedView) -> str:
    name = f" (<code>{h(view.output)}</code>)" if view.output else ""
    out = [f'<h3 id="report">The text the judge saw{name}</h3>']
    if view.segments is not None:
        out.append(
            '<p class="note">What the judge read: the output with hidden markup and text '
            "addressed to the evaluator removed. Highlighted: the evidence quotes the items "
            "cite (hover for the item; darker where the quotes of several items overlap).</p>"
        )
    if view.note:
        out.append(f'<p class="note report-note">{h(view.note)}</p>')
    if view.segments is not None:
        out.append('<pre class="report">' + "".join(_segment(s) for s in view.segments) + "</pre>")
    if view.removed:
        items = "".join(f"<li>{h(r)}</li>" for r in view.removed)
        out.append(
            f'<details class="removed"><summary>Removed before judging ({len(view.removed)}): '
            f"what a reader of the rendered report does not see</summary><ul>{items}</ul></details>"
        )
    return "".join(out)


def judged_section(view: JudgedView) -> str:
    """The ``#judged`` section of a trial page."""
    record = view.record
    out = ['<section id="judged"><h2>Judging</h2>']
    if record.used_mock_llm:
        out.append(
            f'<p class="mock-judge">{badge("mock judge", "b-mock mock-label")} '
            f"{h(fmt.MOCK_JUDGE_TEXT)}</p>"
        )
    out += [_judges(record), _injections(record)]
    if view.items:
        out.append("<h3>Rubric items</h3>")
        out.append(_summary(view))
        out.append(
            table(
                ["Item", "Group", "Verdict", "Evidence", "Checks", "Flags", "Judge's reason"],
                (_item_row(r) for r in view.items),
                cls="items",
                row_attrs=(f' class="item" data-item="{h(r.item.id)}"' for r in view.items),
            )
        )
    pairs = _pairs(view.pairs, view.old_pairs)
    if pairs:
        out.append(
            "<h3>Good-Same-Bad against the baselines</h3>"
            '<p class="note">Each pair is judged twice, the candidate shown first and then '
            "second; the raw scores (-10 to 10) are the candidate's. A pair whose two orders "
            "disagree is inconsistent and left out of G/S/B. A report much longer than the "
            "baseline is judged again cut to the baseline's length, and the lower raw score "
            "counts.</p>" + pairs
        )
    out.append(_report(view))
    out.append("</section>")
    return "".join(out)
