"""Selection through a URL index: index files, the Common Crawl index server, filters and work items."""
