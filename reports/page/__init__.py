"""The report's page: report.json, the HTML page (its template and figures) and the terminal summary, each a format of the Report (reports/pipeline.py)."""
