"""extract/charts: Helm chart layouts and the key tables of the charts kvlint reads (which values a chart
turns into engine flags, and which it does not read)."""
