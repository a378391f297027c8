"""Free-text scrubbing: the deny-list (consistent replacements, word boundaries, case, overlaps)
and the pattern recognizers (checksums, dates and years that are not phones), checked against
hand-written expectations and a brute-force matcher."""

from __future__ import annotations

import random
import re
from collections import Counter

import pyarrow as pa
import pytest

from benchforge.anonymize.policy.models import Scrub
from benchforge.anonymize.transform import text as text_module
from benchforge.anonymize.transform.text import (
    MIN_IDENTIFIER_LENGTH,
    DenyAutomaton,
    Scrubber,
    iban_valid,
    luhn_valid,
)

DENY = {
    "Jane Smith": "Mary Jones",
    "jane.smith@corp.com": "m.jones@fake.org",
    "Smith": "Brown",
    "Jane Smith Consulting": "Acme Ltd",
    "ACC-0001": "ACC-9XZ1",
    "acc-0001": "acc-9xz1",
    "Bo": "XX",  # shorter than MIN_IDENTIFIER_LENGTH: never deny-listed
}


def scrub(texts: list[str | None], rule: Scrub | None = None, deny=DENY):
    out, hits = Scrubber(rule or Scrub(), deny).scrub(pa.array(texts, pa.string()))
    return out.to_pylist(), hits


def test_deny_list_replaces_case_insensitively_on_word_boundaries() -> None:
    out, hits = scrub(
        [
            "Met JANE SMITH today",
            "Smithson is not Smith.",
            "jane smith2 and xjane smith",
            "(Jane Smith)",
        ]
    )
    assert out == [
        "Met Mary Jones today",
        "Smithson is not Brown.",
        # 'smith2' continues with a digit and 'xjane' starts inside a word: no full-name match;
        # the second 'smith' stands alone after a space, so the surname entry takes it
        "jane smith2 and xjane Brown",
        "(Mary Jones)",
    ]
    assert hits == Counter({"deny_list": 4})


def test_exact_spelling_gets_its_own_replacement_and_others_a_stable_default() -> None:
    out, _ = scrub(["acc-0001 / ACC-0001 / Acc-0001"])
    # the default for an unseen spelling is the replacement of min('ACC-0001', 'acc-0001')
    assert out == ["acc-9xz1 / ACC-9XZ1 / ACC-9XZ1"]


def test_longest_match_wins_over_contained_identifiers() -> None:
    out, hits = scrub(["Jane Smith Consulting called Jane Smith"])
    assert out == ["Acme Ltd called Mary Jones"]
    assert hits["deny_list"] == 2


def test_short_identifiers_are_never_deny_listed() -> None:
    assert len("Bo") < MIN_IDENTIFIER_LENGTH
    scrubber = Scrubber(Scrub(), DENY)
    assert scrubber.deny_list_size == 5  # 'ACC-0001'/'acc-0001' share one entry, 'Bo' is out
    out, hits = scrub(["Bo went home"])
    assert out == ["Bo went home"]
    assert hits == Counter()


def test_scrubbers_sharing_one_built_deny_list_scrub_as_with_their_own() -> None:
    built = DenyAutomaton(DENY)
    texts = pa.array(["Call Jane Smith at jane.smith@corp.com (acc-0001)", "Bo", None])
    for rule in (Scrub(), Scrub(patterns=[])):
        shared, shared_hits = Scrubber(rule, built).scrub(texts)
        own, own_hits = Scrubber(rule, DENY).scrub(texts)
        assert shared.to_pylist() == own.to_pylist()
        assert shared_hits == own_hits and shared_hits["deny_list"] == 3
    assert Scrubber(Scrub(), built).deny_list_size == 5
    assert Scrubber(Scrub(deny_list=False), built).deny_list_size == 0
    out, _ = Scrubber(Scrub(deny_list=False, patterns=[]), built).scrub(texts)
    assert out.to_pylist() == texts.to_pylist()


def test_weights_count_each_texts_replacements_once_per_row_holding_it() -> None:
    import numpy as np

    texts = pa.array(["Jane Smith wrote", "mail bob@x.io", "nothing here"])
    out, hits = Scrubber(Scrub(), DENY).scrub(texts, weights=np.array([3, 5, 7]))
    assert out.to_pylist() == ["Mary Jones wrote", "mail <EMAIL>", "nothing here"]
    assert hits == Counter({"deny_list": 3, "email": 5})
    assert Scrubber(Scrub(), DENY).scrub(texts)[1] == Counter({"deny_list": 1, "email": 1})


def test_nulls_empty_strings_and_type_are_kept() -> None:
    values = pa.array([None, "", "Jane Smith", None], pa.large_string())
    out, hits = Scrubber(Scrub(), DENY).scrub(values)
    assert out.type == pa.large_string()
    assert out.to_pylist() == [None, "", "Mary Jones", None]
    assert hits == Counter({"deny_list": 1})


def test_known_email_gets_its_fake_unknown_one_a_placeholder() -> None:
    out, hits = scrub(["Email jane.smith@corp.com or bob@x.io", "write to jane.smithson@corp.com"])
    assert out == ["Email m.jones@fake.org or <EMAIL>", "write to <EMAIL>"]
    assert hits == Counter({"deny_list": 1, "email": 2})


def test_listed_surname_inside_an_unknown_email_does_not_leave_the_address() -> None:
    out, hits = scrub(["mail smith@other.org now"])
    assert out == ["mail <EMAIL> now"]
    assert hits == Counter({"email": 1})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("call +44 20 7946 0958 today", "call <PHONE> today"),
        ("call (555) 123-4567 x12", "call <PHONE>"),
        ("call (591)341-7776", "call <PHONE>"),
        ("call 206.269.0743x9150", "call <PHONE>"),
        ("call 001-537-640-6812", "call <PHONE>"),
        ("call 5551234567", "call <PHONE>"),
        ("call 090-4214-4737", "call <PHONE>"),
        # not phones: dates, years, bare amounts, times, too few digits, dotted quads
        ("on 2024-01-15 at 10:30", "on 2024-01-15 at 10:30"),
        ("on 15/01/2024", "on 15/01/2024"),
        ("from 1999 2004", "from 1999 2004"),
        ("amount 1234567 units", "amount 1234567 units"),
        ("code 555-12", "code 555-12"),
        ("ref ORD-2024-000123", "ref ORD-2024-000123"),
    ],
)
def test_phone_numbers(text: str, expected: str) -> None:
    out, _ = scrub([text], Scrub(patterns=["phone"]), deny={})
    assert out == [expected]


def test_checksums_match_known_values() -> None:
    assert luhn_valid("4111111111111111")
    assert luhn_valid("378282246310005")  # Amex test number
    assert not luhn_valid("4111111111111112")
    assert iban_valid("GB82WEST12345698765432")  # ISO 13616 example
    assert iban_valid("DE89370400440532013000")
    assert not iban_valid("GB83WEST12345698765432")
    assert not iban_valid("GB82WEST123")  # too short


def test_cards_need_luhn_and_card_grouping() -> None:
    out, hits = scrub(
        [
            "card 4111 1111 1111 1111 ok",
            "card 4111-1111-1111-1112 bad checksum",
            "amex 3782 822463 10005",
            "plain 4111111111111111",
        ],
        Scrub(patterns=["card"]),
        deny={},
    )
    assert out == [
        "card <CARD> ok",
        "card 4111-1111-1111-1112 bad checksum",
        "amex <CARD>",
        "plain <CARD>",
    ]
    assert hits == Counter({"card": 3})


def test_iban_needs_its_checksum_and_stops_before_the_next_word() -> None:
    out, hits = scrub(
        [
            "IBAN DE89 3704 0044 0532 0130 00 AND more",
            "GB82WEST12345698765432.",
            "bad GB00WEST12345698765432",
        ],
        Scrub(patterns=["iban"]),
        deny={},
    )
    assert out == ["IBAN <IBAN> AND more", "<IBAN>.", "bad GB00WEST12345698765432"]
    assert hits == Counter({"iban": 2})


def test_ipv4_octets_and_urls() -> None:
    out, hits = scrub(
        [
            "ip 10.0.0.1. and 999.1.1.1 and 1.2.3",
            "see https://example.com/a?b=1. and www.foo.org, ok",
            "HTTP://EXAMPLE.ORG/x",
        ],
        Scrub(patterns=["ipv4", "url"]),
        deny={},
    )
    assert out == ["ip <IP>. and 999.1.1.1 and 1.2.3", "see <URL>. and <URL>, ok", "<URL>"]
    assert hits == Counter({"ipv4": 1, "url": 3})


def test_only_the_rule_s_patterns_and_deny_list_switch_apply() -> None:
    text = "Jane Smith: bob@x.io, 555-123-4567"
    out, hits = scrub([text], Scrub(patterns=["email"], deny_list=False))
    assert out == ["Jane Smith: <EMAIL>, 555-123-4567"]
    assert hits == Counter({"email": 1})
    out, hits = scrub([text], Scrub(patterns=[]))
    assert out == ["Mary Jones: bob@x.io, 555-123-4567"]
    assert hits == Counter({"deny_list": 1})


def test_non_string_input_is_refused() -> None:
    with pytest.raises(TypeError):
        Scrubber(Scrub(), DENY).scrub(pa.array([1, 2]))


# ----------------------------------------------------------------- brute force comparison

_WORDS = ["alpha", "beta", "gamma", "note", "call", "meeting", "sent", "follow", "up", "with"]


def _brute_deny(text: str, deny: dict[str, str]) -> str:
    """Every occurrence of every listed identifier found with str.find on the lower-cased text,
    ASCII word boundaries, then longest-first / leftmost selection."""
    low = text.lower()
    found = []
    for key, value in deny.items():
        if len(key) < MIN_IDENTIFIER_LENGTH:
            continue
        needle = key.lower()
        pos = low.find(needle)
        while pos != -1:
            end = pos + len(needle)
            before = text[pos - 1] if pos else " "
            after = text[end] if end < len(text) else " "
            if not re.match(r"[A-Za-z0-9]", before) and not re.match(r"[A-Za-z0-9]", after):
                found.append((pos, end, value))
            pos = low.find(needle, pos + 1)
    found.sort(key=lambda f: (f[0] - f[1], f[0]))
    chosen: list[tuple[int, int, str]] = []
    for f in found:
        if all(f[1] <= c[0] or f[0] >= c[1] for c in chosen):
            chosen.append(f)
    out, cursor = [], 0
    for start, end, value in sorted(chosen):
        out.append(text[cursor:start] + value)
        cursor = end
    return "".join(out) + text[cursor:]


def test_deny_list_matches_brute_force_across_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    names = [f"{rng.choice(['Ann', 'Lee', 'Maria'])} {rng.choice(['Kowal', 'Ng', 'Ortiz'])}"]
    codes = [f"ACC-{i:04d}" for i in range(40)] + [f"acc-{i:04d}X" for i in range(5)]
    deny = {k: f"R{i}" for i, k in enumerate(sorted(set(names + codes + ["Kowal", "Ortiz"])))}
    keys = list(deny)
    texts: list[str | None] = []
    for _ in range(300):
        if rng.random() < 0.1:
            texts.append(None)
            continue
        parts = []
        for _ in range(rng.randint(0, 8)):
            pick = rng.random()
            if pick < 0.3:
                key = rng.choice(keys)
                parts.append(key.upper() if rng.random() < 0.3 else key)
            elif pick < 0.4:
                parts.append(rng.choice(keys) + rng.choice(["1", "x", "-", ".", ""]))
            else:
                parts.append(rng.choice(_WORDS))
        texts.append(rng.choice([" ", ", ", "/"]).join(parts))
    # Batches of at most 7 rows or ~60 characters: matches and the row mapping must not depend
    # on where a batch starts.
    monkeypatch.setattr(text_module, "_BATCH_ROWS", 7)
    monkeypatch.setattr(text_module, "_BATCH_BYTES", 60)
    out, hits = scrub(texts, Scrub(patterns=[]), deny=deny)
    # the exact-spelling lookup only differs from the brute force on upper-cased keys, whose
    # default is the single spelling listed: same replacement
    expected = [None if t is None else _brute_deny(t, deny) for t in texts]
    assert out == expected
    assert hits["deny_list"] > 50


def test_prefilters_never_drop_a_match(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    fragments = [
        "bob@x.io",
        "+1-780-563-6083x7783",
        "(555) 123-4567",
        "4111 1111 1111 1111",
        "GB82WEST12345698765432",
        "10.20.30.40",
        "https://a.example.com/p",
        "www.b.org",
        "2024-01-15",
        "1234567",
        "words",
        "Jane Smith",
    ]
    texts = [" ".join(rng.choice(fragments) for _ in range(rng.randint(1, 5))) for _ in range(200)]
    fast, fast_hits = scrub(texts)
    # With every prefilter accepting every row, the regexes alone decide.
    monkeypatch.setattr(text_module, "_PREFILTERS", {k: "" for k in text_module._PREFILTERS})
    slow, slow_hits = scrub(texts)
    assert fast == slow
    assert fast_hits == slow_hits
    assert set(fast_hits) == {"deny_list", "email", "phone", "card", "iban", "ipv4", "url"}


CJK_DENY = {
    "田中太郎": "佐藤花子",
    "山田商事株式会社": "鈴木工業株式会社",
    "王小明": "李华强",
    "华为技术有限公司": "星辰科技有限公司",
    "Smith": "Brown",
    "Berg": "Dahl",
    "Borg": "Holm",
}


def test_cjk_identifiers_are_replaced_without_word_boundaries() -> None:
    """Japanese and Chinese write no spaces between words: a listed name or company inside a
    run of CJK text is replaced, and a Latin name glued to CJK text too."""
    out, hits = scrub(
        [
            "山田商事株式会社の田中太郎様より連絡。",
            "王小明是华为技术有限公司的经理",
            "Smithさんと田中太郎さん",
        ],
        deny=CJK_DENY,
    )
    assert out == [
        "鈴木工業株式会社の佐藤花子様より連絡。",
        "李华强是星辰科技有限公司的经理",
        "Brownさんと佐藤花子さん",
    ]
    assert hits == Counter({"deny_list": 6})


def test_a_latin_name_inside_a_longer_latin_word_is_not_replaced() -> None:
    """Word boundaries stay for Latin text, accented letters included: 'Berg' in 'Öberg' and
    'Borg' in 'Borgå' are parts of other words."""
    out, hits = scrub(["Öberg and Borgå, not Berg or Borg.", "Smithé"], deny=CJK_DENY)
    assert out == ["Öberg and Borgå, not Dahl or Holm.", "Smithé"]
    assert hits == Counter({"deny_list": 2})
