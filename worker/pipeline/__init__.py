"""One input's life, start to end: open, read pages, prefilter, extract, write, commit (process); one page's
extraction (pagequads); its CPU budget; its statistics and sites."""
