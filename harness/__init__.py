"""Runs at scale: trial matrix, resumable store, chunked executor, scoring of stored trials."""
