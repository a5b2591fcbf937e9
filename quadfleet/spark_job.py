"""``quadfleet extract --engine spark`` as a job file for ``spark-submit``, as cc-pyspark's users hand theirs.

It takes the arguments of ``quadfleet extract`` (the same parser: inputs, ``--listing``/``--prefix``,
``--index``, ``--formats``, ``--table``, ``--out``...) and runs them with ``--engine spark`` on the session
``spark-submit`` configured (its ``--master``, executors and memory). Each input is one task; the output
is the layout ``quadfleet extract`` always writes (``quadfleet stats``, ``subsets`` and ``tables`` read it),
resumable: submit the same job again and it does only what is not committed. The exit status is the
command's (0 done, 1 some inputs failed, each in OUT/errors/, 2 refused before any work).

quadfleet must be installed on every node (the tasks import it), with the same version as the driver's.
Locally::

    pip install 'quadfleet[spark]'
    spark-submit --master 'local[4]' $(python -c 'import quadfleet.spark_job as m; print(m.__file__)') \\
        crawl/*.warc.gz --out out/

On Amazon EMR, a bootstrap action installs quadfleet (not the ``spark`` extra: EMR brings its own Spark) on
every node with a Python of 3.10 or later. EMR 7.x runs Spark 3.5 on Amazon Linux 2023, whose ``python3`` is
3.9, so e.g. ``s3://my-bucket/install-quadfleet.sh``::

    #!/bin/bash
    set -euo pipefail
    sudo dnf install -y python3.11 python3.11-pip python3.11-devel gcc
    sudo python3.11 -m pip install quadfleet      # or a wheel you built: s3://my-bucket/quadfleet-*.whl

given at cluster creation (``--bootstrap-actions Path=s3://my-bucket/install-quadfleet.sh``); then, on the
primary node (or as a step running the same line)::

    spark-submit --conf spark.pyspark.python=python3.11 --conf spark.pyspark.driver.python=python3.11 \
        --conf spark.task.maxFailures=4 \
        $(python3.11 -c 'import quadfleet.spark_job as m; print(m.__file__)') \
        --listing s3://commoncrawl/crawl-data/CC-MAIN-2024-22/warc.paths.gz --out s3://my-results/cc-2024-22

Inputs and the output on S3 are read and written by quadfleet itself (boto3, the instance role's
credentials), not through Spark's filesystems. The driver holds only the list of inputs and one outcome per
input; the executors need as much memory and scratch space as one local worker process (a few hundred MB,
the input's outputs on local disk until they are uploaded).
"""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """``quadfleet extract ARGS... --engine spark`` (the last ``--engine`` given wins, so this one)."""
    from quadfleet.cli.main import main as run

    return run(["extract", *(sys.argv[1:] if argv is None else argv), "--engine", "spark"])


if __name__ == "__main__":
    sys.exit(main())
