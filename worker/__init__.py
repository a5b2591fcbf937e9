"""The per-input code, the same in a local run and on the fleet. Its rooms, in the order data flows through
them (each imports only the rooms before it): ``rdf`` (terms, N-Quads, schema.org), ``native`` (the loader of
the native accelerators, which every later room takes them from), ``html`` (a page's bytes to text, scans and
DOM), ``archive`` (inputs to HTML pages), ``extractors`` (one subpackage per format), ``output`` (what an input
writes: files, statistics, subsets, tables), ``pipeline`` (one input's life, one page's extraction) and
``queue`` (the fleet worker's message lifecycle). ``errors``, ``aws``, ``allocator`` and ``config`` serve them
all."""
