"""The ``benchforge`` command: one module per stage, on top of flows and libraries."""
