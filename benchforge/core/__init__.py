"""The foundation every other layer builds on: settings, errors, records, the artifact store
and its layout, the sandbox, the LLM client. Imports nothing of Benchforge above it."""
