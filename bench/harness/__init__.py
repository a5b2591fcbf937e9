"""What the benchmark scripts import but never run as commands: the deterministic WARC writing behind every
benchmark archive and the archive written N times over for the whole-process runs (archives.py), the contenders
bench_api.py times (contenders.py) and its ``--engine local`` / ``--engine spark`` whole commands (engines.py),
and bench_extract.py's extruct + rdflib baseline (extruct_rdflib.py). The scripts put bench/ on ``sys.path``, so
this package imports as ``harness`` (``from harness.engines import run_spark``), like the sibling modules."""
