"""`kvlint upgrade`: each deployment under the release it runs and under each later release kvlint has
read, reported where the verdict changes or the KV pool moves, with the release-table rows that changed.

releases.py: which releases are walked (each engine's data/releases.json); walk.py: one release's run
(the `kvlint check` pipeline, kvlint/run/lint.py); rows.py: the table rows that differ between two
releases; deployments.py: a file's deployments walked; report.py: text and JSON; command.py: the command.
"""
