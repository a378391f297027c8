"""The check every engine makes before it runs the agent's SQL: one statement, and one that
starts as a read. A lexical check, not a parser: it sees quotes, identifiers in quotes and
brackets, PostgreSQL's dollar quotes and escape strings, and comments (nested ``/* */`` too),
so a ``;`` inside any of them does not split. It is the first of two fences: each engine
also refuses writes itself (read-only files and connections, an authorizer, grants), so a
statement this check lets through by mistake still cannot write."""

from __future__ import annotations

import re

READ_KEYWORDS = (
    "SELECT",
    "WITH",
    "VALUES",
    "TABLE",
    "FROM",
    "SHOW",
    "DESCRIBE",
    "EXPLAIN",
    "SUMMARIZE",
)
_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$")
_WORD = re.compile(r"[A-Za-z_]+")
_CLOSERS = {"'": "'", '"': '"', "`": "`", "[": "]"}


def split_statements(sql: str) -> list[str]:
    """The statements of ``sql`` (split on ``;`` outside quotes and comments), each stripped;
    statements that are only whitespace and comments are left out."""
    statements: list[str] = []
    start = i = 0
    n = len(sql)
    while i < n:
        ch = sql[i]
        if ch == "-" and sql.startswith("--", i):
            newline = sql.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif ch == "/" and sql.startswith("/*", i):
            i = _block_comment_end(sql, i)
        elif ch == "$" and (tag := _DOLLAR_TAG.match(sql, i)) and not _in_word(sql, i):
            end = sql.find(tag.group(), tag.end())
            i = n if end < 0 else end + len(tag.group())
        elif ch in _CLOSERS:
            i = _quote_end(sql, i, escapes=ch == "'" and _escape_string(sql, i))
        elif ch == ";":
            statements.append(sql[start:i])
            start = i = i + 1
        else:
            i += 1
    statements.append(sql[start:])
    return [s.strip() for s in statements if not _only_comments(s)]


def first_keyword(statement: str) -> str:
    """The statement's first word, upper case ('' when it starts with no word), past leading
    comments and opening parentheses."""
    i = 0
    n = len(statement)
    while i < n:
        if statement[i].isspace() or statement[i] == "(":
            i += 1
        elif statement.startswith("--", i):
            newline = statement.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif statement.startswith("/*", i):
            i = _block_comment_end(statement, i)
        else:
            break
    word = _WORD.match(statement, i)
    return word.group().upper() if word else ""


def refusal(sql: str) -> str | None:
    """Why ``sql`` is refused before any engine sees it, in words for the agent; None when it
    is one statement that starts as a read."""
    statements = split_statements(sql)
    if not statements:
        return "the query is empty: send one SQL statement that reads (e.g. SELECT ...)"
    if len(statements) > 1:
        return (
            f"query_db runs one statement per call and this query has {len(statements)}: "
            "send them one at a time"
        )
    keyword = first_keyword(statements[0])
    if keyword not in READ_KEYWORDS:
        what = f"{keyword} statements are" if keyword else "this statement is"
        return f"query_db is read-only: {what} refused. {allowed_phrase()}"
    return None


def allowed_phrase() -> str:
    return "Only statements that read run: " + ", ".join(READ_KEYWORDS) + "."


def _block_comment_end(sql: str, i: int) -> int:
    depth = 0
    n = len(sql)
    while i < n:
        if sql.startswith("/*", i):
            depth += 1
            i += 2
        elif sql.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return n


def _quote_end(sql: str, i: int, *, escapes: bool) -> int:
    """The index after the quoted text opened at ``i`` (a doubled closer stays inside)."""
    closer = _CLOSERS[sql[i]]
    i += 1
    n = len(sql)
    while i < n:
        ch = sql[i]
        if escapes and ch == "\\":
            i += 2
        elif ch == closer:
            if closer != "]" and sql.startswith(closer * 2, i):
                i += 2
            else:
                return i + 1
        else:
            i += 1
    return n


def _escape_string(sql: str, quote: int) -> bool:
    """PostgreSQL's E'...' (backslash escapes): an E right before the quote, not ending a
    longer word."""
    return quote > 0 and sql[quote - 1] in "eE" and not _in_word(sql, quote - 1)


def _in_word(sql: str, i: int) -> bool:
    return i > 0 and (sql[i - 1].isalnum() or sql[i - 1] in "_$")


def _only_comments(text: str) -> bool:
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
        elif text.startswith("--", i):
            newline = text.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif text.startswith("/*", i):
            i = _block_comment_end(text, i)
        else:
            return False
    return True
