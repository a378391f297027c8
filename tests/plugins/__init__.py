"""Plugins the tests load as a user would (``BENCHFORGE_PLUGINS``): code outside Benchforge
that registers a task family, its toolset and its page partial."""
