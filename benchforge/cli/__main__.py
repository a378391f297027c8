"""``python -m benchforge.cli``: the ``benchforge`` command."""

from benchforge.cli.main import main

raise SystemExit(main())
