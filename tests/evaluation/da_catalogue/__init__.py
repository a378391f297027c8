"""Checks of the ads and enterprise ``da_open`` task catalogue (static tests and a data script)."""
