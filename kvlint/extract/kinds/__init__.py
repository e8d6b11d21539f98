"""extract/kinds: one module per input kind (a Kubernetes kind, a document shape); extract/registry.py
lists which reads what."""
