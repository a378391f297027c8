"""The release report: fidelity, relational integrity, utility and privacy of an anonymized
warehouse against its source, the policy's thresholds, and JSON / HTML renderings.

``build_report`` assembles it (catalogs ``src`` and ``rel`` attached on one connection),
``write_report`` writes ``release-report.json`` and ``release-report.html``.
"""
