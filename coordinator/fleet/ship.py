"""What ``quadfleet fleet up`` ships to the instances: this checkout's source and a wheelhouse of exactly the
dependency versions installed here, pinned by SHA-256, so that a fleet runs the code that was tested and
contacts no package index at boot.

- The source archive ``quadfleet-VERSION.tar.gz``: the files git tracks, as they are in the working tree
  (what the tests ran on), in a tar with sorted names, no owners and no times, gzipped without a name or
  time: the same tree gives the same bytes, and so the same digest. The instances build it (the C modules
  compile for their own architecture) with the build backend from the wheelhouse.
- The wheelhouse: the worker's dependencies (quadfleet's requirements, without the ``report`` extra's
  plotting stack), resolved through the distributions installed here with their markers evaluated for the
  instances (CPython 3.11 on Linux, x86_64 or aarch64), each at the version installed here, as wheels for
  that platform (``pip download --only-binary=:all: --platform ...``); a dependency with no wheel on the
  index is built here into a wheel, and refused unless that wheel is pure Python. Plus the build backend
  (setuptools, as ``[build-system] requires`` asks) and the pip installed here, which the instances
  install first. Downloads are cached in ``~/.cache/quadfleet/wheels``.
- ``SHA256SUMS``: ``<sha256>  <file>`` per file, as ``sha256sum -c`` reads it. Its own digest is what the
  stack is given: the files are uploaded under ``s3://BUCKET/.quadfleet-code/<that digest>/``, and an
  instance checks the list against the digest, then every file against the list, before installing with
  ``pip install --no-index``. A file changed on S3 stops the instance's setup.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from .stack import FleetError

TARGET_PYTHON = "3.11"       # the python3.11 package of Amazon Linux 2023, which the user data installs
SUMS = "SHA256SUMS"
CODE_PREFIX = ".quadfleet-code"   # under the output bucket's root: outside any output prefix workers write
GLIBC_MINOR = 34             # Amazon Linux 2023's glibc: manylinux wheels up to 2_34 run there
MACHINE = {"x86_64": "x86_64", "arm64": "aarch64"}
BUILD_REQUIRES = "setuptools>=77"   # [build-system] requires of pyproject.toml
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "quadfleet" / "wheels"


@dataclass(frozen=True)
class Shipment:
    """The files to upload (``folder``), their digests, and the digest of ``SHA256SUMS`` naming them all."""

    folder: Path
    files: dict[str, str]          # name: sha256
    digest: str
    version: str
    source: str                    # the source archive's name
    requirements: list[str]        # name==version of the wheelhouse
    untracked: list[str]           # files of the package folders git does not track: not shipped

    @property
    def bytes(self) -> int:
        return sum((self.folder / name).stat().st_size for name in self.files)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def source_root() -> Path:
    """The checkout this quadfleet runs from (its pyproject.toml names the project quadfleet)."""
    root = Path(__file__).resolve().parents[2]
    project = root / "pyproject.toml"
    if not project.is_file() or not re.search(r'^name = "quadfleet"$', project.read_text(encoding="utf-8"), re.M):
        raise FleetError("fleet up ships the code of a source checkout (pip install -e .), and this quadfleet is "
                         f"installed from a package ({root}): run it from a checkout, or give --from-pypi VERSION")
    return root


def source_archive(root: Path, version: str, dest: Path) -> Path:
    """The tracked files of the checkout as they are in the working tree, as a reproducible tar.gz."""
    try:
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise FleetError(f"{root}: cannot list the checkout's files with git: "
                         f"{getattr(exc, 'stderr', b'').decode(errors='replace').strip() or exc}") from None
    names = sorted(n for n in listed.stdout.decode("utf-8", "surrogateescape").split("\0")
                   if n and (root / n).is_file())
    top = f"quadfleet-{version}"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in names:
            data = (root / name).read_bytes()
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mtime = len(data), 0
            info.mode = 0o755 if os.access(root / name, os.X_OK) else 0o644
            tar.addfile(info, io.BytesIO(data))
    path = dest / f"{top}.tar.gz"
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
        gz.write(buf.getvalue())
    return path


def untracked(root: Path) -> list[str]:
    """Files under the package folders that git does not track (not ignored either): they are not shipped,
    which `fleet up` says, since code that works here could then fail on the instances."""
    try:
        res = subprocess.run(["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z", "--",
                              "quadfleet", "worker", "coordinator", "config", "infra", "pyproject.toml",
                              "setup.py", "build_backend.py"],
                             capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return []
    return sorted(n for n in res.stdout.decode("utf-8", "surrogateescape").split("\0") if n)


def target_environment(arch: str) -> dict[str, str]:
    """PEP 508 marker values of the instances."""
    return {"python_version": TARGET_PYTHON, "python_full_version": f"{TARGET_PYTHON}.0", "sys_platform": "linux",
            "platform_system": "Linux", "platform_machine": MACHINE[arch], "os_name": "posix",
            "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}


def worker_requirements(arch: str, extra: str = "") -> list[str]:
    """``name==version`` of every distribution a worker needs, at the versions installed here: quadfleet's
    own requirements (with ``extra``'s, if given) and theirs, markers evaluated for the instances."""
    import importlib.metadata as md

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    env = target_environment(arch)
    pinned: dict[str, str] = {}
    todo = [r for r in map(Requirement, md.requires("quadfleet") or ())
            if r.marker is None or r.marker.evaluate({**env, "extra": extra})]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in pinned:
            continue
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            raise FleetError(f"{req.name} (a dependency of the workers) is not installed here, so its version "
                             "cannot be pinned: pip install -e . first") from None
        pinned[name] = dist.version
        todo += [r for r in map(Requirement, dist.requires or ()) if r.marker is None or r.marker.evaluate(env)]
    return [f"{name}=={version}" for name, version in sorted(pinned.items())]


def _platforms(arch: str) -> list[str]:
    """Platform tags of wheels that run on the instances, the most specific first."""
    machine = MACHINE[arch]
    return [f"manylinux_2_{minor}_{machine}" for minor in range(GLIBC_MINOR, 16, -1)] + [
        f"manylinux2014_{machine}", "any"]


def _runs_there(tag) -> bool:
    """Whether a wheel tag's interpreter and ABI suit CPython TARGET_PYTHON."""
    minor = int(TARGET_PYTHON.split(".")[1])
    if tag.abi == "abi3":
        return tag.interpreter.startswith("cp3") and int(tag.interpreter[3:] or 0) <= minor
    return tag.interpreter in (f"cp3{minor}", "py3", f"py3{minor}") and tag.abi in (f"cp3{minor}", "none")


def _download(reqs: list[str], arch: str, cache: Path) -> None:
    """Wheels of ``reqs`` for the instances into ``cache`` (pip skips what is there already)."""
    plat = [a for p in _platforms(arch) if p != "any" for a in ("--platform", p)]
    py = TARGET_PYTHON.replace(".", "")
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", *plat,
           "--python-version", TARGET_PYTHON, "--implementation", "cp", "--abi", f"cp{py}", "--abi", "abi3",
           "--abi", "none", "-d", str(cache)]
    res = subprocess.run(cmd + reqs, capture_output=True, text=True)
    if res.returncode == 0:
        return
    for req in reqs:  # one by one: which has no wheel for the instances
        if subprocess.run(cmd + [req], capture_output=True, text=True).returncode == 0:
            continue
        built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(cache), req],
                               capture_output=True, text=True)
        wheel = _find(cache, req)
        if built.returncode != 0 or wheel is None or not wheel.name.endswith("-none-any.whl"):
            detail = (built.stderr or res.stderr).strip().splitlines()[-1:] or [""]
            raise FleetError(f"{req}: no wheel for CPython {TARGET_PYTHON} on Linux {MACHINE[arch]} on the index, "
                             f"and it does not build into a pure-Python one here ({detail[0]})")


def _find(folder: Path, req: str) -> Path | None:
    """The wheel of ``name==version`` in ``folder``."""
    from packaging.utils import canonicalize_name, parse_wheel_filename

    name, _, version = req.partition("==")
    found = None
    for path in sorted(folder.glob("*.whl")):
        try:
            wname, wversion, _, _ = parse_wheel_filename(path.name)
        except ValueError:
            continue
        if wname == canonicalize_name(name) and str(wversion) == version:
            found = path
    return found


def _pick(folder: Path, req: str, arch: str) -> Path:
    """The wheel of ``req`` in ``folder`` that runs on the instances (the most specific platform first)."""
    from packaging.utils import canonicalize_name, parse_wheel_filename

    name, _, version = req.partition("==")
    order = _platforms(arch)
    best = None
    for path in folder.glob("*.whl"):
        try:
            wname, wversion, _, tags = parse_wheel_filename(path.name)
        except ValueError:
            continue
        if wname != canonicalize_name(name) or str(wversion) != version:
            continue
        ranks = [order.index(t.platform) for t in tags if t.platform in order and _runs_there(t)]
        if ranks and (best is None or min(ranks) < best[0]):
            best = (min(ranks), path)
    if best is None:
        raise FleetError(f"{req}: no wheel for CPython {TARGET_PYTHON} on Linux {MACHINE[arch]} was found")
    return best[1]


def build(arch: str, version: str, dest: Path, cache: Path = CACHE) -> Shipment:
    """Make the shipment for instances of ``arch`` (x86_64 or arm64) in ``dest``."""
    root = source_root()
    dest.mkdir(parents=True, exist_ok=True)
    source = source_archive(root, version, dest)
    left_out = untracked(root)
    import importlib.metadata as md

    reqs = worker_requirements(arch)
    cache.mkdir(parents=True, exist_ok=True)
    _download(reqs + [f"pip=={md.version('pip')}"], arch, cache)  # pip too: the one installing is this one
    backend = _build_backend(cache)
    files = {source.name: sha256(source)}
    for req in reqs + [f"pip=={md.version('pip')}"]:
        wheel = _pick(cache, req, arch)
        target = dest / wheel.name
        target.write_bytes(wheel.read_bytes())
        files[wheel.name] = sha256(target)
    target = dest / backend.name
    target.write_bytes(backend.read_bytes())
    files[backend.name] = sha256(target)
    sums = "".join(f"{digest}  {name}\n" for name, digest in sorted(files.items()))
    (dest / SUMS).write_text(sums, encoding="utf-8")
    return Shipment(dest, files, hashlib.sha256(sums.encode()).hexdigest(), version, source.name, reqs, left_out)


def _build_backend(cache: Path) -> Path:
    """The newest setuptools wheel satisfying the build requirement (pure Python)."""
    from packaging.specifiers import SpecifierSet
    from packaging.utils import parse_wheel_filename

    spec = SpecifierSet(BUILD_REQUIRES[len("setuptools"):])
    res = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                          "-d", str(cache), BUILD_REQUIRES], capture_output=True, text=True)
    found = []
    for path in cache.glob("setuptools-*.whl"):
        _, v, _, _ = parse_wheel_filename(path.name)
        if v in spec:
            found.append((v, path))
    if not found:
        raise FleetError(f"cannot download the build backend {BUILD_REQUIRES}: {res.stderr.strip()[-200:]}")
    return max(found)[1]


def upload(shipment: Shipment, s3, bucket: str, prefix: str = CODE_PREFIX) -> str:
    """Put the shipment under ``s3://bucket/prefix/<digest>/`` (SHA256SUMS last; nothing again if it is
    there with the same digest): its URL."""
    import botocore.exceptions

    base = f"{prefix.strip('/')}/{shipment.digest}"
    try:
        there = s3.get_object(Bucket=bucket, Key=f"{base}/{SUMS}")["Body"].read()
        if hashlib.sha256(there).hexdigest() == shipment.digest:
            return f"s3://{bucket}/{base}"
    except botocore.exceptions.ClientError:
        pass
    for name in sorted(shipment.files):
        s3.upload_file(str(shipment.folder / name), bucket, f"{base}/{name}")
    s3.upload_file(str(shipment.folder / SUMS), bucket, f"{base}/{SUMS}")
    return f"s3://{bucket}/{base}"




def measure_install(arch: str = "x86_64") -> dict:
    """Install the shipment as an instance does (a fresh venv, ``pip install --no-index``) twice: the worker
    set, and the worker set with the ``report`` extra (matplotlib and its stack: what every instance
    installed before the split). Seconds and MB of each venv. ``python -m quadfleet.coordinator.fleet.ship``."""
    import importlib.metadata as md
    import shutil
    import tempfile
    import time


    out = {}
    with tempfile.TemporaryDirectory(prefix="quadfleet-measure-") as tmp:
        folder = Path(tmp) / "code"
        shipment = build(arch, md.version("quadfleet"), folder)
        extra = sorted(set(worker_requirements(arch, "report")) - set(worker_requirements(arch)))
        if extra:  # the report extra's own distributions, as wheels beside the others
            _download(extra, arch, CACHE)
            for req in extra:
                shutil.copy(_pick(CACHE, req, arch), folder)
        report = [r.partition("==")[0] for r in extra]
        for label, what in (("worker", [shipment.source]), ("worker+report", [shipment.source, *report])):
            venv = Path(tmp) / label
            started = time.monotonic()
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-index", "--no-cache-dir",
                   "--find-links", str(folder)]
            subprocess.run(pip + ["--upgrade", "pip"], check=True)
            subprocess.run(pip + [str(folder / what[0]), *what[1:]], check=True)
            seconds = time.monotonic() - started
            size = sum(p.stat().st_size for p in venv.rglob("*") if p.is_file() and not p.is_symlink())
            out[label] = {"seconds": round(seconds, 1), "mb": round(size / 1e6, 1),
                          "distributions": len(list((venv / "lib").glob("python*/site-packages/*.dist-info")))}
        out["shipped_mb"] = round(shipment.bytes / 1e6, 1)
        out["report_extra"] = extra
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(measure_install(), indent=1))
