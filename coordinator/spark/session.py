"""A SparkSession for ``quadfleet extract --engine spark``, or one line (exit 2) saying why there is none.

Under ``spark-submit`` (which starts the driver with ``PYSPARK_GATEWAY_PORT`` set) the session is the one
it configured, its ``--master`` included, unless ``--spark-master`` is given. Otherwise a session already
running in this process is used as it is (a notebook's, or a test's), else one is started with
``--spark-master`` (default ``local[*]``). Java is looked for before Spark is started, since pyspark's own
error for a missing JVM is a traceback about a gateway port."""
from __future__ import annotations

import os
import shutil
import sys

from ...worker.errors import QuadfleetError

DEFAULT_MASTER = "local[*]"
INSTALL_HINT = "pip install 'quadfleet[spark]'"
MIN_PYSPARK = (3, 5)


class SparkUnavailable(QuadfleetError):
    """pyspark or Java is missing, or Spark did not start: one line, exit status 2, before any work."""


def require_pyspark() -> None:
    try:
        import pyspark
    except ImportError:
        raise SparkUnavailable(f"--engine spark needs pyspark, which is not installed: {INSTALL_HINT}") from None
    try:
        version = tuple(int(part) for part in pyspark.__version__.split(".")[:2])
    except ValueError:
        return  # a development build: let it try
    if version < MIN_PYSPARK:
        raise SparkUnavailable(f"--engine spark needs pyspark 3.5 or later, not {pyspark.__version__}: "
                               f"{INSTALL_HINT}")


def java_command() -> str | None:
    """The ``java`` pyspark's launcher would run: ``$JAVA_HOME/bin/java`` if JAVA_HOME is set, else the
    first on PATH; None if there is none."""
    home = os.environ.get("JAVA_HOME")
    if home:
        path = os.path.join(home, "bin", "java")
        return path if os.access(path, os.X_OK) else None
    return shutil.which("java")


def require_java() -> None:
    if java_command() is None:
        where = (f"JAVA_HOME={os.environ['JAVA_HOME']} has no bin/java" if os.environ.get("JAVA_HOME")
                 else "JAVA_HOME is unset and there is no java on PATH")
        raise SparkUnavailable(f"--engine spark needs a Java runtime (17 or later) and finds none: {where} "
                               "(e.g. apt-get install openjdk-17-jre-headless)")


def under_spark_submit() -> bool:
    """Whether ``spark-submit`` started this process (its JVM is already there, configured)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def spark_session(master: str | None = None):
    """The session to run on: see the module's docstring. Raises SparkUnavailable (one line) if pyspark or
    Java is missing or Spark does not start."""
    require_pyspark()
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is not None:  # this process's own: used as it was made
        return SparkSession.builder.getOrCreate()
    submitted = under_spark_submit()
    if not submitted:
        require_java()
    builder = SparkSession.builder.appName("quadfleet extract")
    if master or not submitted:
        builder = builder.master(master or DEFAULT_MASTER)
    if not submitted:
        # Local executors run this interpreter (the one quadfleet is installed in, a venv maybe not on PATH),
        # and the command's own progress bar stands for Spark's.
        if not os.environ.get("PYSPARK_PYTHON"):
            builder = builder.config("spark.pyspark.python", sys.executable)
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        # Executors start as `python -m pyspark.daemon`, the current folder first on their sys.path: a folder
        # named quadfleet there (the clone, seen from its parent) would shadow the package. Python 3.11's safe
        # path leaves it out (3.10 has none: there, start a run elsewhere).
        if sys.version_info >= (3, 11):
            builder = builder.config("spark.executorEnv.PYTHONSAFEPATH", "1")
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # pyspark's errors for a JVM that will not start are not one class
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise SparkUnavailable(f"--engine spark: Spark did not start ({first}); it needs Java 17 or later: "
                               "check `java -version` and JAVA_HOME") from None
    if not submitted:
        spark.sparkContext.setLogLevel("ERROR")  # warnings per task would bury the command's own lines
    return spark
