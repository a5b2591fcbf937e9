"""The effective configuration: the shipped defaults, a user's file over them, then command-line flags.

Validated whole at start-up, naming each bad key and value, so a mistake is refused before any work
starts rather than discovered on the 400th archive. Its hash goes into every statistics file, so outputs
made under different settings can be told apart.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from .errors import ConfigError

_TOP_KEYS = {"formats", "keep_all_predicates", "prefilter", "limits", "output", "subsets", "quality", "tables",
             "queue", "worker"}
TABLE_KEYS = {"limits": {"max_page_bytes", "page_seconds", "max_elements"},
               "output": {"compresslevel", "compression", "zstd_level", "table"},
               "subsets": {"classes", "mode"},
               "quality": {"profile", "repair_statistics", "repair_subsets", "repair_tables"},
               "tables": {"listing_page_entities", "min_properties", "deduplicate", "min_column_fill"},
               "queue": {"visibility_timeout", "max_receive_count", "wait_time_seconds", "retry_delay"},
               "worker": {"spot_endpoint", "spot_poll_interval", "autoscaling", "allow_http"}}


@dataclass(frozen=True)
class QueueSettings:
    visibility_timeout: int = 900
    max_receive_count: int = 3
    wait_time_seconds: int = 20
    retry_delay: int = 60


@dataclass(frozen=True)
class WorkerSettings:
    spot_endpoint: str = "auto"
    spot_poll_interval: float = 5.0
    autoscaling: str = "auto"  # scale-in protection and leaving the group (quadfleet.worker.queue.asg)
    allow_http: bool = False  # queue messages may name http:// inputs (else only s3:// and https://)


@dataclass(frozen=True)
class TableSettings:
    """[tables]: how ``quadfleet tables`` cleans the table corpus (Web Data Commons' steps; each off at 0/false).
    Read from the file given to ``quadfleet tables --config``; its flags win."""
    listing_page_entities: int = 0   # leave out a page's rows of a class it has more than this many of
    min_properties: int = 0          # leave out rows with fewer property cells
    deduplicate: bool = False        # leave out a row whose cells but url equal an earlier row's of its table
    min_column_fill: float = 0.0     # empty a table's columns filled in fewer than this share of its rows


_NOT_EXTRACTED = ("queue", "worker", "tables")  # Config's fields that are not in its JSON (how the fleet runs)


@dataclass(frozen=True)
class Config:
    formats: tuple[str, ...]
    keep_all_predicates: bool
    prefilter: bool
    max_page_bytes: int
    compresslevel: int
    # Per-page budgets: CPU seconds for the extractors of one page, and tags before a page gets no DOM.
    page_seconds: float = 10.0
    max_elements: int = 250_000
    # N-Quads files: "gzip" (level: compresslevel) or "zstd" (level: zstd_level); the page index is always gzip.
    compression: str = "gzip"
    zstd_level: int = 3
    table: str = "none"  # "parquet": tables/<id>.parquet, one row per quad written
    # schema.org class subsets (local names; empty: none) and how a page's quads are chosen ("page", "entity")
    subset_classes: tuple[str, ...] = ()
    subset_mode: str = "page"
    # [quality]: the schema.org errors profile in the statistics, and where the repairs apply (worker/quality/).
    # The defaults are an old manifest's (neither existed): the shipped config turns all four on.
    quality_profile: bool = False
    repair_statistics: bool = False
    repair_subsets: bool = False
    repair_tables: bool = False
    # How the fleet runs; not part of what is extracted, so not in the hash or the run manifest.
    queue: QueueSettings = QueueSettings()
    worker: WorkerSettings = WorkerSettings()
    # How `quadfleet tables` cleans its tables: not what is extracted either (the table corpus's own
    # fingerprint holds what it used).
    tables: TableSettings = TableSettings()

    def to_json(self) -> dict:
        """What determines the output (travels to worker processes and into run manifests)."""
        # (dataclasses.asdict's result, without its deep copy of the fleet's settings only to delete them: every
        # field left is a number, a string or a tuple of strings)
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in _NOT_EXTRACTED}
        d["formats"] = list(self.formats)
        d["subset_classes"] = list(self.subset_classes)
        return d

    @property
    def nq_level(self) -> int:
        """The compression level of N-Quads files under the chosen compression."""
        return self.zstd_level if self.compression == "zstd" else self.compresslevel

    @property
    def hash(self) -> str:
        blob = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def extractors(self) -> list:
        """The enabled extractors, in the configured order."""
        from .extractors import EXTRACTORS

        return [EXTRACTORS[f] for f in self.formats]


def _read_toml(path: str | Path, text: str | None = None) -> dict:
    try:
        if text is None:
            text = Path(path).read_text(encoding="utf-8")
        return tomllib.loads(text)
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except UnicodeDecodeError as exc:  # a binary file (a gzipped one, say): TOML is UTF-8 text
        raise ConfigError(f"{path}: not a TOML file: not UTF-8 text (byte {exc.start} is "
                          f"0x{exc.object[exc.start]:02x})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def default_text() -> str:
    return resources.files("quadfleet.config").joinpath("quadfleet.toml").read_text(encoding="utf-8")


def _merge(base: dict, over: dict, where: str) -> dict:
    for key in over:
        if key == "prefilter_needles":
            raise ConfigError(f"{where}: [prefilter_needles] is gone: the prefilter now reads the page's tags "
                              "(class, rel, property, itemscope, script type); remove the table")
        if key not in _TOP_KEYS:
            raise ConfigError(f"{where}: unknown key {key!r} (known: {', '.join(sorted(_TOP_KEYS))})")
    merged = dict(base)
    for key, value in over.items():
        if key in TABLE_KEYS:
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: [{key}] must be a table")
            merged[key] = {**base.get(key, {}), **value}
        else:
            merged[key] = value
    return merged


def _validate(raw: dict, where: str) -> Config:
    """The effective configuration from the merged tables, each value checked (ConfigError naming the first bad
    key and what it must be): the formats, the two switches, then each table in turn."""
    def bad(key: str, why: str) -> ConfigError:
        return ConfigError(f"{where}: {key}: {why}")

    formats = _validate_formats(raw.get("formats"), bad)
    for key in ("keep_all_predicates", "prefilter"):
        if not isinstance(raw.get(key), bool):
            raise bad(key, f"must be true or false, not {raw.get(key)!r}")
    for table, keys in TABLE_KEYS.items():
        for key in raw.get(table, {}):
            if key not in keys:
                raise bad(f"{table}.{key}", f"unknown key (known: {', '.join(sorted(keys))})")
    limits = _validate_limits(raw.get("limits", {}), bad)
    level = raw.get("output", {}).get("compresslevel")
    if not _int_in(level, 1, 9):
        raise bad("output.compresslevel", f"must be an integer from 1 to 9, not {level!r}")
    output = _validate_output(raw.get("output", {}), bad)
    subsets = _validate_subsets(raw.get("subsets", {}), bad)
    quality = _validate_quality(raw.get("quality", {}), bad)
    return Config(formats=formats, keep_all_predicates=raw["keep_all_predicates"], prefilter=raw["prefilter"],
                  compresslevel=level, **limits, **output, **subsets, **quality,
                  queue=_validate_queue(raw.get("queue", {}), bad), worker=_validate_worker(raw.get("worker", {}), bad),
                  tables=_validate_tables(raw.get("tables", {}), bad))


def _int_in(value, lo: int, hi: int) -> bool:
    """Whether ``value`` is an integer (not a bool) from ``lo`` to ``hi``."""
    return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


def _number_in(value, lo: float, hi: float) -> bool:
    """Whether ``value`` is a number (not a bool) from ``lo`` to ``hi``."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and lo <= value <= hi


def _validate_formats(formats, bad) -> tuple[str, ...]:
    """formats: a list of registered format ids, each once; an unknown one is named with the id it may mean."""
    from .extractors import EXTRACTORS

    if not isinstance(formats, list) or not formats or not all(isinstance(f, str) for f in formats):
        raise bad("formats", "must be a non-empty list of format ids")
    unknown = [f for f in formats if f not in EXTRACTORS]
    if unknown:  # every one named, with the id it probably meant ('jsonld': html-embedded-jsonld)
        named = []
        for f in unknown:
            near = [k for k in EXTRACTORS if f.lower() and f.lower() in k]
            named.append(f"{f!r}" + (f" (did you mean {' or '.join(near)}?)" if 0 < len(near) <= 2 else ""))
        raise bad("formats", f"unknown format{'s' if len(unknown) > 1 else ''} {', '.join(named)} "
                             f"(known: {', '.join(EXTRACTORS)})")
    if len(set(formats)) != len(formats):
        raise bad("formats", "lists a format twice")
    return tuple(formats)


def _validate_limits(limits: dict, bad) -> dict:
    """[limits]: the largest page read, a page's CPU budget, the most tags before a page gets no DOM."""
    max_page = limits.get("max_page_bytes")
    if not _int_in(max_page, 1, float("inf")):
        raise bad("limits.max_page_bytes", f"must be a positive integer, not {max_page!r}")
    page_seconds = limits.get("page_seconds", 10.0)
    if not _number_in(page_seconds, 0, 3600):
        raise bad("limits.page_seconds",
                  f"must be a number of seconds from 0 (no budget) to 3600, not {page_seconds!r}")
    max_elements = limits.get("max_elements", 250_000)
    if not _int_in(max_elements, 1, float("inf")):
        raise bad("limits.max_elements", f"must be a positive integer, not {max_elements!r}")
    return {"max_page_bytes": max_page, "page_seconds": float(page_seconds), "max_elements": max_elements}


QUEUE_RANGES = {"visibility_timeout": (1, 43200), "max_receive_count": (1, 1000), "wait_time_seconds": (0, 20),
                "retry_delay": (0, 43200)}


def _validate_queue(q: dict, bad) -> QueueSettings:
    """[queue]: integers within SQS's limits (:data:`QUEUE_RANGES`)."""
    for key, (lo, hi) in QUEUE_RANGES.items():
        v = q.get(key, getattr(QueueSettings, key))
        if not _int_in(v, lo, hi):
            raise bad(f"queue.{key}", f"must be an integer from {lo} to {hi}, not {v!r}")
    return QueueSettings(**{k: q.get(k, getattr(QueueSettings, k)) for k in QUEUE_RANGES})


def _auto_off_or_url(value) -> bool:
    return isinstance(value, str) and (value in ("auto", "off") or value.startswith(("http://", "https://")))


def _validate_worker(w: dict, bad) -> WorkerSettings:
    """[worker]: the spot notice endpoint and how often it is polled, the Auto Scaling group's, http:// inputs."""
    endpoint = w.get("spot_endpoint", "auto")
    if not _auto_off_or_url(endpoint):
        raise bad("worker.spot_endpoint", f'must be "auto", "off" or an http(s) URL, not {endpoint!r}')
    interval = w.get("spot_poll_interval", 5)
    if not _number_in(interval, 0.1, 60):
        raise bad("worker.spot_poll_interval", f"must be a number of seconds from 0.1 to 60, not {interval!r}")
    autoscaling = w.get("autoscaling", "auto")
    if not _auto_off_or_url(autoscaling):
        raise bad("worker.autoscaling", f'must be "auto", "off" or an http(s) URL, not {autoscaling!r}')
    allow_http = w.get("allow_http", False)
    if not isinstance(allow_http, bool):
        raise bad("worker.allow_http", f"must be true or false, not {allow_http!r}")
    return WorkerSettings(spot_endpoint=endpoint, spot_poll_interval=float(interval), autoscaling=autoscaling,
                          allow_http=allow_http)


def _validate_tables(t: dict, bad) -> TableSettings:
    """[tables]: the table corpus's cleaning: two counts from 0, a switch, a share from 0 to 1."""
    for key in ("listing_page_entities", "min_properties"):
        value = t.get(key, 0)
        if not _int_in(value, 0, float("inf")):
            raise bad(f"tables.{key}", f"must be an integer of 0 (keep all) or more, not {value!r}")
    if not isinstance(t.get("deduplicate", False), bool):
        raise bad("tables.deduplicate", f"must be true or false, not {t['deduplicate']!r}")
    fill = t.get("min_column_fill", 0.0)
    if not _number_in(fill, 0, 1):
        raise bad("tables.min_column_fill", f"must be a share from 0 (keep all) to 1, not {fill!r}")
    return TableSettings(listing_page_entities=t.get("listing_page_entities", 0),
                         min_properties=t.get("min_properties", 0), deduplicate=t.get("deduplicate", False),
                         min_column_fill=float(fill))


def _validate_output(out: dict, bad) -> dict:
    """[output]: the N-Quads compression and its zstd level, the Parquet table or none."""
    compression = out.get("compression", "gzip")
    if compression not in ("gzip", "zstd"):
        raise bad("output.compression", f'must be "gzip" or "zstd", not {compression!r}')
    zstd_level = out.get("zstd_level", 3)
    if not _int_in(zstd_level, 1, 22):
        raise bad("output.zstd_level", f"must be an integer from 1 to 22, not {zstd_level!r}")
    table = out.get("table", "none")
    if table not in ("none", "parquet"):
        raise bad("output.table", f'must be "none" or "parquet", not {table!r}')
    return {"compression": compression, "zstd_level": zstd_level, "table": table}


def _validate_subsets(sub: dict, bad) -> dict:
    """[subsets]: classes by their schema.org local names (each a class of the shipped vocabulary), a mode."""
    classes = sub.get("classes", [])
    if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
        raise bad("subsets.classes", 'must be a list of schema.org class names (e.g. ["Product", "Event"]), '
                                     "or [] for no subsets")
    if classes:
        from .rdf.schemaorg import VocabularyUnavailable, class_names, local_name

        try:
            known = class_names()
        except (VocabularyUnavailable, OSError) as exc:
            raise bad("subsets.classes", f"cannot read the schema.org vocabulary: {exc}") from None
        for c in classes:
            if c not in known:
                hint = (f" (name it {local_name(c)!r}: classes are given by local name)"
                        if local_name(c) in known else "")
                raise bad("subsets.classes", f"{c!r} is not a schema.org class{hint}")
        if len(set(classes)) != len(classes):
            raise bad("subsets.classes", "lists a class twice")
    mode = sub.get("mode", "page")
    if mode not in ("page", "entity"):
        raise bad("subsets.mode", f'must be "page" or "entity", not {mode!r}')
    return {"subset_classes": tuple(classes), "subset_mode": mode}


def _validate_quality(q: dict, bad) -> dict:
    """[quality]: four switches (missing ones are off: the shipped file sets them)."""
    out = {}
    for key in TABLE_KEYS["quality"]:
        value = q.get(key, False)
        if not isinstance(value, bool):
            raise bad(f"quality.{key}", f"must be true or false, not {value!r}")
        out["quality_profile" if key == "profile" else key] = value
    return out


def load_config(path: str | None = None, *, formats: list[str] | None = None,
                keep_all_predicates: bool | None = None, prefilter: bool | None = None,
                table: str | None = None) -> Config:
    """Defaults, then the file at ``path`` if given, then the flags that were set."""
    raw = _read_toml("config/quadfleet.toml (built-in)", default_text())
    where = "built-in config"
    if path:
        raw = _merge(raw, _read_toml(path), str(path))
        where = str(path)
    if formats is not None:
        raw["formats"] = formats
    if keep_all_predicates is not None:
        raw["keep_all_predicates"] = keep_all_predicates
    if prefilter is not None:
        raw["prefilter"] = prefilter
    if table is not None:
        raw["output"] = {**raw.get("output", {}), "table": table}
    return _validate(raw, where)


def config_from_json(d: dict) -> Config:
    """Rebuild a Config from :meth:`Config.to_json` (how it travels to worker processes and machines).

    A manifest written before a setting existed gets what that version did: gzip, no table, no subsets."""
    return Config(formats=tuple(d["formats"]), keep_all_predicates=d["keep_all_predicates"],
                  prefilter=d["prefilter"],
                  max_page_bytes=d["max_page_bytes"], compresslevel=d["compresslevel"],
                  page_seconds=d.get("page_seconds", 10.0), max_elements=d.get("max_elements", 250_000),
                  compression=d.get("compression", "gzip"), zstd_level=d.get("zstd_level", 3),
                  table=d.get("table", "none"), subset_classes=tuple(d.get("subset_classes", ())),
                  subset_mode=d.get("subset_mode", "page"),
                  **{k: d.get(k, False) for k in ("quality_profile", "repair_statistics", "repair_subsets",
                                                  "repair_tables")})
