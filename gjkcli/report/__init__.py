"""Renderers: findings in, text or renderables out. Nothing here prints, reads inputs or runs
the engine.

`table` and `scan` (rich renderables for people), `lines` (the report for a log: a finding per
line, the table in plain characters), `trace` (GJK and EPA narrated), `jsonout` (the
JSON document and trace lines), `ci` (JUnit XML and GitHub annotations), `sarif` (SARIF 2.1.0).

May import: `gjkcli.pipeline.findings` and `gjkcli.engine.results` (the records they read).
"""
