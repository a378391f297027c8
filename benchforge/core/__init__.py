"""The foundation every other layer builds on: settings, errors, records, the artifact store
and its layout, the sandbox, the LLM client. Imports nothing of Benchforge above it."""

if not __name__.startswith("benchforge."):  # one name per module (README, "Layout")
    raise ImportError(f"import benchforge.{__name__}, not {__name__}")
