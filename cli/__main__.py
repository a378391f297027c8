"""``python -m benchforge.cli``: the ``benchforge`` command."""

from benchforge.cli.app import main

raise SystemExit(main())
