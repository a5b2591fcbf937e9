"""The crawl report's numbers as people read them and its PNG charts (matplotlib, Agg: no display needed).

Apart from :mod:`.write` (which decides what the report holds and writes its files) and
:mod:`.document` (its text), because drawing is its own job with its own heavy dependency, imported
only when a chart is drawn.
"""
from __future__ import annotations

from pathlib import Path

CHART_DIR = "charts"
BAR = "#3b6ea8"
BAR2 = "#e08a2c"


# -- numbers as people read them ------------------------------------------------------------------------

def num(v) -> str:
    if isinstance(v, float):
        return f"{v:,.2f}" if v < 100 else f"{v:,.0f}"
    return f"{v:,}"


def est(v: int, bounds: list | None) -> str:
    """``12,345`` when exact; ``≈12,345 [12,100 – 12,600]`` when estimated."""
    if not bounds or bounds[0] == bounds[1] == v:
        return num(v)
    return f"≈{v:,} [{bounds[0]:,} – {bounds[1]:,}]"


def pct(fraction: float) -> str:
    """A share as a percentage; a share too small for two decimals says so rather than reading as none."""
    if not fraction:
        return "0 %"
    return "<0.01 %" if fraction < 0.0001 else f"{fraction * 100:,.2f} %"


def size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return str(n)


def short_iri(iri: str, width: int = 48) -> str:
    s = iri[7:] if iri.startswith("http://") else iri
    return s if len(s) <= width else s[:width - 1] + "…"


# -- charts -------------------------------------------------------------------------------------------------

def charts_available() -> bool:
    """Whether matplotlib is installed: the charts are left out without it (workers install quadfleet
    without the plotting stack; ``pip install 'quadfleet[report]'`` brings it)."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _hbar(ax, labels: list[str], values: list[float], title: str, color: str = BAR,
          bounds: list[list[int]] | None = None) -> None:
    y = list(range(len(labels)))
    xerr = None
    if bounds and any(b[0] != b[1] for b in bounds):
        xerr = [[max(v - b[0], 0) for v, b in zip(values, bounds)], [max(b[1] - v, 0) for v, b in zip(values, bounds)]]
    ax.barh(y, values, color=color, xerr=xerr, ecolor="#444", capsize=2 if xerr else 0)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    if not ax.yaxis_inverted():  # axes may share y: invert once
        ax.invert_yaxis()
    ax.set_title(title, fontsize=10, loc="left")
    ax.tick_params(axis="x", labelsize=8)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.xaxis.set_major_formatter(thousands())
    ax.grid(axis="x", color="#ddd", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if not values:
        ax.text(0.5, 0.5, "none", transform=ax.transAxes, ha="center", va="center", color="#888")


def thousands():
    from matplotlib.ticker import FuncFormatter

    def f(x, _pos):
        ax = abs(x)
        for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
            if ax >= div:
                return f"{x / div:g}{suffix}"
        return f"{x:g}"
    return FuncFormatter(f)


def save(fig, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=100, facecolor="white")
    pyplot().close(fig)


def chart_overview(s: dict, path: Path) -> None:
    plt = pyplot()
    o = s["overview"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 2.6))
    _hbar(a, ["HTML pages", "passed the prefilter", "with triples"],
          [o["html_pages"], o["pages_parsed"], o["pages_with_triples"]], "Pages")
    _hbar(b, ["PLDs", "PLDs with triples", "hosts", "hosts with triples"],
          [o["plds"], o["plds_with_triples"], o["hosts"], o["hosts_with_triples"]], "Pay-level domains and hosts",
          color=BAR2, bounds=[o["plds_bounds"], o["plds_with_triples_bounds"], o["hosts_bounds"],
                               o["hosts_with_triples_bounds"]])
    save(fig, path)


def chart_formats(s: dict, path: Path) -> None:
    plt = pyplot()
    fmts = list(s["formats"])
    f = s["formats"]
    fig, axes = plt.subplots(1, 4, figsize=(14, 0.8 + 0.32 * max(len(fmts), 3)), sharey=True)
    _hbar(axes[0], fmts, [f[x]["pages"] for x in fmts], "Pages with triples")
    _hbar(axes[1], fmts, [f[x]["plds"] for x in fmts], "PLDs with triples", color=BAR2,
          bounds=[f[x]["plds_bounds"] for x in fmts])
    _hbar(axes[2], fmts, [f[x]["typed_entities"] for x in fmts], "Typed entities")
    _hbar(axes[3], fmts, [f[x]["triples"] for x in fmts], "Triples")
    save(fig, path)


def chart_classes(s: dict, fmt: str, by_entities: list[dict], by_plds: list[dict], pairs: list[dict],
                  path: Path) -> None:
    plt = pyplot()
    n = max(len(by_entities), len(pairs), 3)
    fig, axes = plt.subplots(1, 3, figsize=(16, 1.0 + 0.28 * n))
    _hbar(axes[0], [short_iri(r["class"], 40) for r in by_entities], [r["entities"] for r in by_entities],
          f"{fmt}: top classes by entities")
    _hbar(axes[1], [short_iri(r["class"], 40) for r in by_plds], [r["plds"] for r in by_plds],
          f"{fmt}: top classes by PLDs", color=BAR2, bounds=[r["plds_bounds"] for r in by_plds])
    _hbar(axes[2], [short_iri(r["class"], 26) + " / " + short_iri(r["property"], 26).rsplit("/", 1)[-1]
                    for r in pairs], [r["entities"] for r in pairs], "top class/property pairs")
    save(fig, path)


def chart_plds(title: str, tops: dict, path: Path) -> None:
    plt = pyplot()
    t, p = tops["by_triples"], tops["by_pages"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 1.0 + 0.28 * max(len(t), len(p), 3)))
    _hbar(a, [r["pld"] for r in t], [r["triples"] for r in t], f"{title}: top PLDs by triples",
          bounds=[r["triples_bounds"] for r in t])
    _hbar(b, [r["pld"] for r in p], [r["pages"] for r in p], f"{title}: top PLDs by pages with triples",
          color=BAR2, bounds=[r["pages_bounds"] for r in p])
    save(fig, path)


def chart_errors(s: dict, top: int, path: Path) -> None:
    plt = pyplot()
    kinds = list(s["errors"]["by_kind"].items())[:top]
    fig, ax = plt.subplots(figsize=(10, 1.0 + 0.28 * max(len(kinds), 3)))
    _hbar(ax, [k for k, _ in kinds], [v for _, v in kinds], "Problems counted, by kind", color="#b5473a")
    save(fig, path)


def chart_quality(s: dict, path: Path) -> None:
    """Per checked format, the quads with each kind of error (counts: the shares are in the table beside)."""
    plt = pyplot()
    q = s["quality"]
    fmts = [f for f, figures in q["formats"].items() if any(k["quads"] for k in figures["kinds"].values())]
    kinds = list(q["all_formats"]["kinds"])
    fig, axes = plt.subplots(1, len(fmts), figsize=(5 * len(fmts), 1.0 + 0.28 * max(len(kinds), 3)), sharey=True,
                             squeeze=False)
    for ax, fmt in zip(axes[0], fmts):
        per = q["formats"][fmt]["kinds"]
        _hbar(ax, kinds, [per[k]["quads"] if k in per else 0 for k in kinds], f"{fmt}: quads in error",
              color="#b5473a")
    save(fig, path)
