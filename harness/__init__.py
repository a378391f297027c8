"""Runs at scale, without Prefect: trial matrix, resumable store, chunked executor, scoring of
stored trials, dataset resolution, model endpoints and the sandbox policy."""
