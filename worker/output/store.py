"""A directory as an output store (:class:`LocalStore`): files appear by rename, so none is ever seen half-written;
:mod:`.s3` is the same for an S3 prefix. Where things go in either is :mod:`.layout`."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

SCRATCH_DIR = ".tmp"  # under a local output directory: files not yet renamed into place


def _file_mode() -> int:
    """What ``open()`` gives a new file under this process's umask (read once, at import: setting the umask
    to read it is not safe while other threads create files)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


# Scratch files come from mkstemp, which makes them 0600 whatever the umask; what is put in place gets the
# mode any ordinary writer (cp, open) would give it, so others can read a run's outputs when the umask says so.
FILE_MODE = _file_mode()


class LocalStore:
    """A directory as an output store. Files appear by rename, so none is ever seen half-written.

    ``scratch`` is where files are written before they are renamed into place: a directory on the same
    filesystem, by default ``ROOT/.tmp``; ``quadfleet extract`` gives each run its own
    (``ROOT/.tmp/<run>/``, see :mod:`quadfleet.worker.output.scratch`), so that what a killed run left can be told
    from what a live one is writing."""

    def __init__(self, root: str | Path, scratch: str | Path | None = None):
        self.root = Path(root)
        self.url = str(root)
        self.scratch = Path(scratch) if scratch is not None else self.root / SCRATCH_DIR

    def prepare(self) -> None:
        self.scratch.mkdir(parents=True, exist_ok=True)

    def exists(self, key: str) -> bool:
        return (self.root / key).exists()

    def read_bytes(self, key: str) -> bytes:
        return (self.root / key).read_bytes()

    def put_file(self, key: str, path: str) -> None:
        """Move a finished scratch file into place (same filesystem: atomic)."""
        dest = self.root / key
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(path, FILE_MODE)
        os.replace(path, dest)

    def put_bytes(self, key: str, data: bytes) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.scratch, prefix="put-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        self.put_file(key, tmp)

    def put_marker(self, key: str, data: bytes = b"") -> bool:
        """Create ``key`` only if absent (first writer wins, as S3's If-None-Match: *). False if it existed."""
        dest = self.root / key
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.scratch, prefix="marker-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, FILE_MODE)
        try:
            os.link(tmp, dest)
            return True
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)

    def delete(self, key: str) -> None:
        try:
            (self.root / key).unlink()
        except FileNotFoundError:
            pass

    def list(self, folder: str) -> dict[str, dict]:
        """{key: {"size", "modified"}} for every file under ``folder`` (as S3Store.list)."""
        out = {}
        base = self.root / folder
        if base.is_dir():
            for path in base.rglob("*"):
                if path.is_file():
                    st = path.stat()
                    out[str(path.relative_to(self.root))] = {"size": st.st_size, "modified": st.st_mtime}
        return out
