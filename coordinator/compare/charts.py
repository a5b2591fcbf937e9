"""The comparison's charts (matplotlib, Agg), in the style of ``quadfleet stats``' report: each format's and each
class's share of pages over the runs, and the PLDs each format adopted and dropped at each transition."""
from __future__ import annotations

from pathlib import Path

from ..report.charts import BAR, BAR2, pyplot, save, thousands as thousands_formatter

_LINES = 10   # formats or classes drawn in one chart, the largest first


def _lines(ax, runs: list[str], series: dict[str, list], title: str) -> None:
    x = list(range(len(runs)))
    for name, values in series.items():
        points = [(i, v * 100) for i, v in zip(x, values) if v is not None]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", linewidth=1.4, markersize=4, label=name)
    ax.set_xticks(x)
    ax.set_xticklabels(runs, fontsize=8)
    ax.set_ylabel("% of the run's HTML pages", fontsize=8)
    ax.set_title(title, fontsize=10, loc="left")
    ax.tick_params(axis="y", labelsize=8)
    ax.grid(axis="y", color="#ddd", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if series:
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)


def _largest(rows: dict[str, list[dict]]) -> dict[str, list]:
    ranked = sorted(rows.items(), key=lambda kv: (-max((r["pages_share"] or 0) for r in kv[1]), kv[0]))
    return {name: [r["pages_share"] for r in per] for name, per in ranked[:_LINES]
            if any(r["pages_share"] for r in per)}


def chart_shares(s: dict, what: str, title: str, path: Path) -> None:
    """Pages with data (per format) or pages of a class, as a share of each run's HTML pages."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 3.6))
    _lines(ax, [r["label"] for r in s["runs"]], _largest(s[what]), title)
    save(fig, path)


def chart_churn(s: dict, path: Path) -> None:
    """Per format, the PLDs adopted (up) and dropped (down) at each transition."""
    from matplotlib.ticker import FuncFormatter

    plt = pyplot()
    thousands = thousands_formatter()
    fmts = [f for f, rows in s["churn"].items() if any((r["adopted"] or r["dropped"]) for r in rows)]
    transitions = [f"{r['from']} → {r['to']}" for r in next(iter(s["churn"].values()), [])]
    fig, axes = plt.subplots(1, max(len(transitions), 1), figsize=(5 * max(len(transitions), 1),
                                                                    1.2 + 0.32 * max(len(fmts), 3)),
                             sharey=True, squeeze=False)
    for t, ax in enumerate(axes[0]):
        y = list(range(len(fmts)))
        adopted = [s["churn"][f][t]["adopted"] or 0 for f in fmts] if transitions else []
        dropped = [-(s["churn"][f][t]["dropped"] or 0) for f in fmts] if transitions else []
        ax.barh(y, adopted, color=BAR, label="adopted")
        ax.barh(y, dropped, color=BAR2, label="dropped")
        ax.axvline(0, color="#444", linewidth=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels(fmts, fontsize=8)
        if not ax.yaxis_inverted():
            ax.invert_yaxis()
        ax.set_title(f"PLDs adopted and dropped: {transitions[t] if transitions else ''}", fontsize=10, loc="left")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, pos: thousands(abs(x), pos)))  # (drops: no minus)
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", color="#ddd", linewidth=0.6)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        ax.legend(fontsize=7, frameon=False)
    save(fig, path)
