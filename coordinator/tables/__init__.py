"""quadfleet tables: the Schema.org Table Corpus, one table per class and host, with keys for matching."""
