"""plan: pure capacity arithmetic (integer bytes, no I/O) and each engine's memory accounting."""
