"""A named pipe as an input to `quadfleet extract`, half of an archive written until the test says go on: the
tests of interrupted and concurrent runs (tests/extraction/test_extract_reruns.py), progress written to a log
(tests/cli/test_extract_cli.py) and the Spark engine killed mid-input (tests/integrations/test_spark_engine.py)."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path


class SlowInput:
    """A named pipe as an input: the archive's first part is written, the rest only on ``finish()``, so a
    `quadfleet extract` reading it stays in the middle of its work for as long as a test needs."""

    def __init__(self, path: Path, data: bytes, first: int):
        os.mkfifo(path)
        self.path, self.data, self.first = path, data, first
        self.go_on = threading.Event()
        self.thread = threading.Thread(target=self._feed, daemon=True)
        self.thread.start()

    def _feed(self) -> None:
        deadline = time.monotonic() + 60
        while True:  # wait for the reader, without blocking for ever if it never comes (a run stopped first)
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                if time.monotonic() > deadline or self.go_on.is_set():
                    return
                time.sleep(0.05)
        os.set_blocking(fd, True)
        try:
            os.write(fd, self.data[:self.first])
            self.go_on.wait(120)
            os.write(fd, self.data[self.first:])
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)

    def finish(self) -> None:
        self.go_on.set()
        self.thread.join(30)
