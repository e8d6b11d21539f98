"""Fixes: findings' edits made exact against the source (`materialize`), applied in rounds (`apply`),
shown as a unified diff (`diff`). Between rules and report in the flow; nothing else edits files."""
