"""A direct-identifier detector for warehouse columns: by column name and by content.

It is the safety net under a hand-written policy: ``check_policy`` refuses to ``keep`` a column it
flags (unless the author says ``allow_pii`` and why), and ``draft_policy`` replaces what it
flags. It errs towards flagging: a false alarm costs one line in the policy, a miss publishes
somebody's phone number.

- By name: tokens such as email, phone, first_name, street, postal code, birth, ssn, iban,
  card, ip_address, legal_representative, company name. Booleans are never flagged
  (``has_opted_out_of_email`` says nothing about anyone's address), and each name rule says
  which kinds of column it applies to (``birthdate`` is a DATE, a phone may be stored as a
  number, an email never is).
- By content (text columns): a deterministic sample of up to 2,000 non-NULL values (the rows with
  the smallest hash of the value, so the same warehouse always gives the same verdict); the
  column is flagged when at least half of them are email addresses, phone numbers, IBANs (mod-97
  valid), card numbers (Luhn valid) or IPv4 addresses. A sample is enough: a column that is half
  emails shows it in any 2,000 rows, and the scan stays one top-N pass in DuckDB however large
  the table is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

import duckdb

from benchforge.anonymize.sqltypes import is_numeric_type
from benchforge.core.sql import qualified, quote

SAMPLE_SIZE = 2000
CONTENT_SHARE = 0.5

Family = Literal["text", "number", "date"]

# (pattern over the lower-cased column name, what it suggests, column families it applies to)
_NAME_RULES: tuple[tuple[str, str, frozenset[Family]], ...] = (
    (r"e_?mail", "an email address", frozenset({"text"})),
    (
        r"phone|(^|_)mobile(_number)?$|(^|_)(fax|telephone|tel)(_|$)",
        "a phone number",
        frozenset({"text", "number"}),
    ),
    (
        r"(^|_)(first|last|full|middle|given|maiden|contact|person|customer)_?name$"
        r"|(^|_)(surname|forename)$",
        "a person's name",
        frozenset({"text"}),
    ),
    (r"legal_?representative", "a person's name (legal representative)", frozenset({"text"})),
    (
        r"(^|_)(company|company_name|account_name|agency_name|legal_name|business_name"
        r"|organi[sz]ation_name|employer)$",
        "a company name",
        frozenset({"text"}),
    ),
    (r"(^|_)(ip|ip_?address|ipv4|ipv6)$", "an IP address", frozenset({"text"})),
    (r"street|(^|_)address(_|$)|address_line", "a street address", frozenset({"text"})),
    (
        r"postal|postcode|post_code|(^|_)zip(_?code)?(_|$)",
        "a postal code",
        frozenset({"text", "number"}),
    ),
    (r"birth|(^|_)dob(_|$)", "a birth date", frozenset({"text", "number", "date"})),
    (
        r"(^|_)ssn(_|$)|social_security|national_id|passport|tax_id|driver_?licen[cs]e",
        "a national identity number",
        frozenset({"text", "number"}),
    ),
    (r"iban|bank_account", "a bank account number", frozenset({"text", "number"})),
    (
        r"(^|_)(credit_?card(_number)?|card_number|card_no|pan)$",
        "a payment card number",
        frozenset({"text", "number"}),
    ),
    (r"(^|_)credit_code(_|$)|unified_social", "a company registration code", frozenset({"text"})),
    (r"(^|_)(user_?name|login)$", "a user name", frozenset({"text"})),
    (r"(^|_)(website|homepage|web_site)$", "a website naming its owner", frozenset({"text"})),
)


def type_family(duckdb_type: str) -> Family | Literal["boolean", "other"]:
    """The coarse kind of a DuckDB column type."""
    t = duckdb_type.upper()
    if t.startswith(("VARCHAR", "TEXT", "STRING", "CHAR")):
        return "text"
    if t == "BOOLEAN":
        return "boolean"
    if t.startswith(("DATE", "TIMESTAMP")):
        return "date"
    if is_numeric_type(t):
        return "number"
    return "other"


def name_reason(column: str, duckdb_type: str) -> str | None:
    """Why the column's name suggests a direct identifier, or None."""
    family = type_family(duckdb_type)
    name = column.lower()
    for pattern, what, families in _NAME_RULES:
        if family in families and re.search(pattern, name):
            return f"the name '{column}' suggests {what}"
    return None


# ---------------------------------------------------------------- content recognizers

_EMAIL = re.compile(r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")
_PHONE_SHAPE = re.compile(r"^\+?[\d\s().-]+?(\s*(x|ext\.?)\s*\d{1,6})?$", re.IGNORECASE)
_DATE_LIKE = re.compile(r"^\d{4}[./-]\d{1,2}[./-]\d{1,2}|^\d{1,2}[./-]\d{1,2}[./-]\d{2,4}$")
_GROUPED_NUMBER = re.compile(r"^-?\d{1,3}([ ,]\d{3})+(\.\d+)?$|^-?\d+\.\d+$")
_IPV4 = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")
_IBAN = re.compile(r"^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$")
_CARD = re.compile(r"^\d(?:[ -]?\d){12,18}$")


def is_email(value: str) -> bool:
    return bool(_EMAIL.match(value))


def is_phone(value: str) -> bool:
    """International or national phone formats: 7-15 digits, and something that makes it a phone
    rather than a number: a leading '+', parentheses, three or more digit groups, two groups after
    a trunk '0', or 10-15 bare digits (a US or Chinese mobile number). Dates and grouped or
    decimal numbers are not phones."""
    if not _PHONE_SHAPE.match(value) or _DATE_LIKE.match(value) or _GROUPED_NUMBER.match(value):
        return False
    main = re.split(r"(?i)\s*(?:x|ext\.?)\s*\d", value, maxsplit=1)[0]
    digits = sum(ch.isdigit() for ch in main)
    if not 7 <= digits <= 15:
        return False
    groups = len(re.findall(r"\d+", main))
    if main.startswith("+") or "(" in main or groups >= 3:
        return True
    if groups == 2:  # a national number with its trunk prefix: "(0)1632 960123", "04331 59703"
        return main.startswith("0") and not main.startswith("00") and digits >= 9
    return groups == 1 and digits >= 10 and not main.startswith("00")


def is_ipv4(value: str) -> bool:
    m = _IPV4.match(value)
    return m is not None and all(int(octet) <= 255 for octet in m.groups())


def is_iban(value: str) -> bool:
    compact = value.replace(" ", "").upper()
    if not _IBAN.match(compact):
        return False
    rotated = compact[4:] + compact[:4]
    digits = "".join(str(int(ch, 36)) for ch in rotated)
    return int(digits) % 97 == 1


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def is_card(value: str) -> bool:
    if not _CARD.match(value):
        return False
    digits = re.sub(r"\D", "", value)
    return len(set(digits)) > 1 and luhn_valid(digits)


RECOGNIZERS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("email addresses", is_email),
    ("IBANs", is_iban),
    ("payment card numbers", is_card),
    ("IPv4 addresses", is_ipv4),
    ("phone numbers", is_phone),
)


def content_reason(values: Sequence[str]) -> str | None:
    """Why these sampled values look like direct identifiers (>= 50% match one recognizer)."""
    cleaned = [v.strip() for v in values if v is not None and v.strip()]
    if not cleaned:
        return None
    for what, recognizer in RECOGNIZERS:
        hits = sum(1 for v in cleaned if recognizer(v))
        if hits >= CONTENT_SHARE * len(cleaned):
            share = round(100 * hits / len(cleaned))
            return f"{hits} of {len(cleaned)} sampled values ({share}%) look like {what}"
    return None


def sample_values(
    con: duckdb.DuckDBPyConnection, catalog: str, table: str, column: str, limit: int = SAMPLE_SIZE
) -> list[str]:
    """Up to ``limit`` non-NULL values, chosen by hash (deterministic, one top-N pass)."""
    col = quote(column)
    rows = con.execute(
        f"SELECT CAST({col} AS VARCHAR) FROM {qualified(catalog, 'raw', table)} "
        f"WHERE {col} IS NOT NULL ORDER BY hash({col}), {col} LIMIT {int(limit)}"
    ).fetchall()
    return [r[0] for r in rows]


def detect_pii(
    con: duckdb.DuckDBPyConnection, catalog: str, table: str, column: str, duckdb_type: str
) -> str | None:
    """A reason string when ``catalog.raw.table.column`` looks like a direct identifier."""
    reason = name_reason(column, duckdb_type)
    if reason is not None:
        return reason
    if type_family(duckdb_type) != "text":
        return None
    return content_reason(sample_values(con, catalog, table, column))
