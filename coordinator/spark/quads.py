"""An output's quads as a Spark DataFrame, for whoever goes on in Spark SQL, with the columns of
``--table parquet`` (:data:`quadfleet.worker.output.tables.SCHEMA`), whichever way the run was made.

Only committed inputs (with a ``done/`` marker) are read: an attempt that died half-way leaves files nobody
counts. When every committed input has its ``tables/<id>.parquet`` (a run with ``--table parquet``), Spark
reads those (with its own filesystems: EMRFS on EMR, s3a elsewhere if configured). Else the rows are made
from the N-Quads files, one task per committed input, read through quadfleet's own store (a directory or
``s3://``, as ``quadfleet extract`` wrote it), and split into columns by the function the table writer
uses (:func:`quadfleet.worker.output.tables.quad_columns`), so both ways give the same subject, predicate,
object, object_kind, datatype, language and format. The page-level columns come from what the N-Quads and
the page index (``pages/<id>.csv.gz``) hold:

- page_url: the page index's URL whose IRI is the quad's graph (the graph itself if none is);
- host and pld: from that URL, as the extraction computes them (same code, same Public Suffix List);
- archive, record_offset, record_length, fetch_time: the page index's row for that URL. A URL captured
  twice in one archive gets the first capture's (the N-Quads cannot tell the two pages' quads apart).
"""
from __future__ import annotations

from ...worker.errors import QuadfleetError
from ...worker.output.compression import nq_stem
from ...worker.output.layout import table_key
from ..engine import output_store

SOURCES = ("auto", "tables", "nquads")


def quads_dataframe(spark, out: str, source: str = "auto"):
    """A DataFrame of every quad committed under ``out`` (a directory or ``s3://BUCKET/PREFIX``), with the
    table's columns. ``source``: "tables" or "nquads" to choose; "auto", the tables when every committed
    input has one. Raises QuadfleetError if ``out`` holds no committed input."""
    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
    store = output_store(out)
    done = sorted(key.rsplit("/", 1)[-1] for key in store.list("done/"))
    if not done:
        raise QuadfleetError(f"{out}: no committed input (no done/ marker): nothing to read")
    schema = spark_schema()
    tables = set(store.list("tables/")) if source != "nquads" else set()
    if source == "tables" or (source == "auto" and all(table_key(i) in tables for i in done)):
        root = out.rstrip("/")
        return spark.read.schema(schema).parquet(*(f"{root}/{table_key(i)}" for i in done))
    files: dict[str, list[str]] = {i: [] for i in done}
    for key in sorted(store.list("data/")):
        input_id = nq_stem(key.rsplit("/", 1)[-1])
        if input_id in files:
            files[input_id].append(key)
    jobs = [(out, input_id, tuple(keys)) for input_id, keys in files.items() if keys]
    if not jobs:
        return spark.createDataFrame([], schema)
    # Rows made in Python (pyspark's mapInArrow would want pandas, which quadfleet does not install).
    return spark.createDataFrame(spark.sparkContext.parallelize(jobs, len(jobs)).flatMap(input_rows), schema)


def spark_schema():
    """The table's schema (:data:`quadfleet.worker.output.tables.SCHEMA`) in Spark's types."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

    from ...worker.output.tables import SCHEMA

    spark_type = {"string": StringType(), "int64": LongType()}
    return StructType([StructField(f.name, TimestampType() if f.name == "fetch_time" else spark_type[str(f.type)])
                       for f in SCHEMA])


def input_rows(job: tuple[str, str, tuple[str, ...]]):
    """One committed input's quads (``job``: the output, the input's id, its data files) as tuples in the
    table's column order. Top-level, so it pickles by reference."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ...worker.output.compression import read_lines
    from ...worker.output.layout import pages_key
    from ...worker.output.pageindex import read_page_index
    from ...worker.output.tables import SCHEMA, fetch_timestamp, quad_columns
    from ...worker.pipeline.domains import PldCache
    from ...worker.pipeline.process import host_of
    from ...worker.rdf.nquads import iri

    out, input_id, keys = job
    store = output_store(out)
    pages: dict[str, dict] = {}
    for page in read_page_index(store.read_bytes(pages_key(input_id))):
        pages.setdefault(iri(page["url"]) or page["url"], page)  # keyed as the graph term is written
    pld_of = PldCache()
    for key in keys:
        lines = read_lines(store.read_bytes(key))
        if not lines:
            continue
        fmt = key.split("/")[1]
        array = pa.array(lines, pa.string())
        cols = quad_columns(array)
        # The graph: the term before the final " ." (quad_columns splits the same way, for the object).
        rest = pc.list_element(pc.split_pattern(array, " ", max_splits=2), 2)
        graphs = pc.list_element(pc.split_pattern(rest, " ", max_splits=2, reverse=True), 1).to_pylist()
        known: dict[str, tuple] = {}
        values = []
        for graph in graphs:
            row = known.get(graph)
            if row is None:
                page = pages.get(graph)
                url = page["url"] if page else graph[1:-1]
                host = host_of(url)
                row = known[graph] = (
                    url, host, pld_of(host), page["archive"] if page else None,
                    int(page["offset"]) if page and page["offset"] else None,
                    int(page["length"]) if page and page["length"] else None,
                    fetch_timestamp(page["fetch_time"]) if page else None)
            values.append(row)
        for i, name in enumerate(("page_url", "host", "pld", "archive", "record_offset", "record_length",
                                  "fetch_time")):
            cols[name] = pa.array([v[i] for v in values], SCHEMA.field(name).type)
        cols["format"] = pa.repeat(pa.scalar(fmt, pa.string()), len(lines))
        yield from zip(*(cols[name].to_pylist() for name in SCHEMA.names))
