"""``benchforge spec``: list and validate domain specs, export their JSON Schema."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchforge.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    spec = sub.add_parser(
        "spec",
        help="list / validate domain specs, export their JSON Schema",
        description=(
            "validate: load each spec (fields, references, stressors that can apply), then\n"
            "compile every table over empty tables of its column types (expressions, derived\n"
            "SQL, joins, casts, stress pass) and call every Faker generator with its arguments:\n"
            "a spec that validates is a spec that generates."
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    spec.add_argument("action", choices=["list", "validate", "schema"])
    spec.add_argument("files", nargs="*", help="spec files to validate (default: shipped)")
    spec.add_argument("--write", action="store_true", help="schema: update the committed file")
    spec.set_defaults(func=spec_command)


def spec_command(args: argparse.Namespace) -> int:
    from benchforge.synthesis import spec as spec_package
    from benchforge.synthesis.engine.preflight import validate_spec_file
    from benchforge.synthesis.spec import json_schema
    from benchforge.synthesis.spec.loader import domain_spec_path, shipped_domains

    if args.action == "list":
        for name in shipped_domains():
            print(f"{name}\t{domain_spec_path(name)}")
    elif args.action == "schema":
        schema = json_schema()
        if args.write:
            target = Path(spec_package.__file__).parent / "domain_spec.schema.json"
            target.write_text(schema)
            print(f"wrote {target}")
        else:
            sys.stdout.write(schema)
    else:
        for path in args.files or [str(domain_spec_path(n)) for n in shipped_domains()]:
            # Shape, cross references, then a dry compile of every table and Faker call.
            spec = validate_spec_file(domain_spec_path(path))
            columns = sum(len(t.columns) for t in spec.tables)
            print(f"ok  {path}: {len(spec.tables)} tables, {columns} columns")
    return 0
