"""`quadfleet subsets`: every class's per-input subset files merged into its published dataset (external sort, parts,
lookup, sites)."""
