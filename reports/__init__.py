"""backendcheck's report: evidence + catalog + manifest -> verdicts -> HTML."""
