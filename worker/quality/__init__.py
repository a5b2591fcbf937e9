"""Data quality: how far each page's schema.org data is from the vocabulary it names, and the unambiguous repairs.

The N-Quads data files keep what each page said; the profile (in the statistics) says what is wrong with it,
and the repairs apply only where derived datasets read the quads (class counts, subsets, the table corpus)."""
