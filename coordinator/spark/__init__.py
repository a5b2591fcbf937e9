"""``quadfleet extract --engine spark``: each input one Spark task, on the session ``spark-submit`` gives or a
local one (:mod:`.engine`); getting that session, or one line saying why not (:mod:`.session`); and the
quads of an output as a Spark DataFrame for whoever goes on in Spark SQL (:mod:`.quads`).

pyspark is the ``spark`` extra (``pip install 'quadfleet[spark]'``), imported only when one of these runs, so
importing this package costs nothing without it."""
from __future__ import annotations

from .engine import run_spark
from .quads import quads_dataframe
from .session import spark_session

__all__ = ["run_spark", "quads_dataframe", "spark_session"]
