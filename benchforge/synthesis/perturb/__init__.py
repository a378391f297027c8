"""The ``perturb`` step for multi-database question tasks (DataAgentBench style): a dataset's
tables spread over DuckDB, SQLite and PostgreSQL logical databases (a table may become JSON
documents: a DuckDB JSON or PostgreSQL JSONB column, the document store), join keys
reformatted per table, chosen columns removed and written into free text; every change seeded
and recorded. Plain Python: no Prefect. Details: ``docs/perturbation.md``.

Usage: ``perturb(dataset_dir, load_perturb_spec("perturb.yaml"), out_dir, seed=1)``, then
:func:`load_postgres_templates` for the PostgreSQL databases (trials copy the templates with
:mod:`benchforge.core.engines.postgres_trials`)."""

from benchforge.synthesis.perturb.loader import (
    PerturbSpecError,
    check_against_dataset,
    load_perturb_spec,
    parse_perturb_spec,
)
from benchforge.synthesis.perturb.postgres_dump import PostgresLoadError, load_postgres_template
from benchforge.synthesis.perturb.record import EmbedChange, KeyChange, PerturbRecord, PlacedTable
from benchforge.synthesis.perturb.rewrite import PROMPT_VERSION, SentenceRewrite, SentenceRewriter
from benchforge.synthesis.perturb.run import (
    HINTS_FILE,
    RECORD_FILE,
    SCHEMA_FILE,
    ensure_postgres_templates,
    load_postgres_templates,
    perturb,
    read_perturb_record,
)
from benchforge.synthesis.perturb.spec import (
    CaseRule,
    EmbedRule,
    KeyReformat,
    LogicalDatabase,
    PerturbSpec,
    PrefixRule,
    SentenceRewriteOptions,
    TrailingSpaceRule,
    ZeroPadRule,
)

__all__ = [
    "HINTS_FILE",
    "PROMPT_VERSION",
    "RECORD_FILE",
    "SCHEMA_FILE",
    "CaseRule",
    "EmbedChange",
    "EmbedRule",
    "KeyChange",
    "KeyReformat",
    "LogicalDatabase",
    "PerturbRecord",
    "PerturbSpec",
    "PerturbSpecError",
    "PlacedTable",
    "PostgresLoadError",
    "PrefixRule",
    "SentenceRewrite",
    "SentenceRewriteOptions",
    "SentenceRewriter",
    "TrailingSpaceRule",
    "ZeroPadRule",
    "check_against_dataset",
    "ensure_postgres_templates",
    "load_perturb_spec",
    "load_postgres_template",
    "load_postgres_templates",
    "parse_perturb_spec",
    "perturb",
    "read_perturb_record",
]
