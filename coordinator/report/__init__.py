"""`quadfleet stats`: per-input statistics added up, the crawl summary and the report (Markdown, HTML, charts, CSV)."""
