"""Scoring of data-lake pipeline tasks (KramaBench style): answers by type, aggregation."""
