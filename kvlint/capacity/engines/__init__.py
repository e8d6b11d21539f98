"""One module per engine: `settings()` fills the engine's defaults, `plan()` sizes its KV pool."""
