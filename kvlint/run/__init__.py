"""The run: configuration and settings, file discovery, one file's lint from load to findings
(lint.py), suppressions, the fleet check, worker processes and the rule pages. Nothing is imported
here: a run loads only the modules it needs."""
