"""quadfleet on Spark: ``quadfleet extract --engine spark`` (or ``spark-submit`` of ``quadfleet/spark_job.py``)
writes an output, and ``quads_dataframe`` reads it back as a DataFrame for whoever goes on in Spark SQL.

```python
from pyspark.sql import SparkSession
from quadfleet.integrations.spark import quads_dataframe

spark = SparkSession.builder.getOrCreate()
quads = quads_dataframe(spark, "s3://my-results/cc-2024-22")   # or a local output directory
quads.where("predicate = 'http://schema.org/price'").groupBy("pld").count().show()
```

The columns are those of ``--table parquet``: subject, predicate, object, object_kind, datatype, language,
page_url, format, host, pld, archive, record_offset, record_length, fetch_time. Needs pyspark:
``pip install 'quadfleet[spark]'`` (and a Java runtime, 17 or later).

Why here and not under ``quadfleet.coordinator``: this is the stable name; the engine behind it is internal.
"""
from __future__ import annotations

from ..coordinator.spark.quads import quads_dataframe

__all__ = ["quads_dataframe"]
