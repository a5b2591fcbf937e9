"""bench_crawl's report: the machine it ran on, and the figures as text (the JSON is the same dict)."""
from __future__ import annotations

import contextlib
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from crawlmeasure import ratio
from crawlmix import WDC_TARGETS

REPO = Path(__file__).resolve().parents[1]
LABELS = {"any": "any structured data", "html-embedded-jsonld": "JSON-LD", "html-microdata": "microdata",
          "html-mf-hcard": "hCard", "rdfa-beyond-og": "RDFa beyond Open Graph", "og": "Open Graph",
          "html-rdfa": "RDFa (any, Open Graph included)"}
ROWS = [("read-warcio", "read-warcio (warcio, each body)"),
        ("read-quadfleet", "read-quadfleet (iter_pages)"),
        ("lxml", "lxml: warcio + parse (BASELINE)"),
        ("quadfleet-all", "quadfleet-all (every format)"),
        ("quadfleet-jsonld-microdata", "quadfleet-jsonld-microdata"),
        ("extruct", "extruct (6 syntaxes)"),
        ("baseline-commit", "baseline-commit quadfleet-all"),
        ("prefilter", "prefilter alone (fresh pages)")]


def machine_info() -> dict[str, Any]:
    cpu_model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    versions = {}
    for dist in ("quadfleet", "lxml", "warcio", "extruct"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[dist] = metadata.version(dist)
    git = {}
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        git["commit"] = head.stdout.strip()
        status = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True)
        git["uncommitted_files"] = len([ln for ln in status.stdout.splitlines() if ln.strip()])
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(), "cpu_count": os.cpu_count(), "cpu_model": cpu_model,
            "versions": versions, "git": git}


def _show(v, fmt=".2f", none="n/a") -> str:
    return none if v is None else format(v, fmt)


def _mib(kib) -> float:
    return kib / 1024 if kib else 0.0


def print_report(report: dict[str, Any], out=sys.stdout) -> None:
    w = lambda s="": print(s, file=out)  # noqa: E731
    m = report["machine"]
    w(f"quadfleet crawl benchmark  {report['timestamp']}")
    w(f"machine: Python {m['python']} ({m['implementation']}), {m['platform']}, cpu_count={m['cpu_count']}"
      f"{', ' + m['cpu_model'] if m['cpu_model'] else ''}")
    w("versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    g = m["git"]
    if g:
        w(f"repo: {g['commit'][:12]}" + (f" + uncommitted changes in {g['uncommitted_files']} tracked file(s)"
                                         if g["uncommitted_files"] else " (clean)"))
    w(f"one core: {report['pinning']}; in-process measurements run in this one thread, page after page "
      f"(malloc: {report.get('in_process_malloc', 'not recorded')})")
    w(f"corpus: {report['corpus']}   workdir: {report['workdir']}" + ("   (smoke mode)" if report["smoke"] else ""))
    w(f"rounds: {report['rounds']} per measurement (best shown, median beside it); extruct 1 round; "
      f"whole processes on each archive written {report['whole_repeat']} times")
    for name, arc in report["archives"].items():
        comp = arc["composition"]
        w()
        w(f"{arc['file']}: {arc['html_pages']} HTML pages, {arc['records']} records, {arc['bytes'] / 1e6:.2f} MB "
          f"(sha256 {comp['sha256'][:16]})")
        if "sources" in comp:
            s = comp["sources"]
            w(f"  from {s['real_pages']} real pages written {s['real_copies']} times and {s['cc_pages']} Common Crawl "
              f"pages written {s['cc_copies']} times (at most {s['copies_per_page_max']} copies of a page; "
              f"repeats get ?copy=N), plus {s['cc_non_html_records']} Common Crawl non-HTML records")
        w(f"  {'pages with (quadfleet, every format)':<40}{'share':>8}{'pages':>7}   WDC CC-MAIN-2024-42")
        for key, share in comp["share"].items():
            target = WDC_TARGETS.get(key)
            note = f"{target:.1%}" if target is not None else ("most pages" if key == "og" else "")
            w(f"  {LABELS.get(key, key):<40}{share:>8.1%}{comp['pages_with'][key]:>7}   {note}")
        wa = arc.get("whole_archive")
        if wa and wa["repeats"] > 1:
            w(f"  whole-process archive {wa['file']}: {wa['html_pages']:,} HTML pages, {wa['bytes'] / 1e6:.1f} MB "
              f"(written {wa['repeats']} times, repeats get {wa['param']}=R"
              f"{'; reused from the workdir' if wa['cached'] else ''})")
    for name, res in report["results"].items():
        _print_results(w, report["archives"][name], res)
    start = report.get("start_up") or {}
    if start.get("quadfleet") and start.get("script"):
        sq, sl = start["quadfleet"], start["script"]
        w()
        w(f"start-up alone (an archive with no page, best of {sq['rounds']}): quadfleet extract {sq['seconds']:.3f} s "
          f"{_mib(sq['peak_rss_kib']):.1f} MiB, warcio + lxml script {sl['seconds']:.3f} s "
          f"{_mib(sl['peak_rss_kib']):.1f} MiB")
    for warning in report["warnings"]:
        w(f"WARNING: {warning}")


def _print_results(w, arc: dict, res: dict) -> None:
    ms = res["measurements"]
    lx = ms.get("lxml", {}).get("pages_per_s")
    w()
    w(f"{arc['file']} ({arc['html_pages']} HTML pages)")
    w(f"  {'measurement':<38}{'pages/s':>10}{'ms/page':>10}{'median p/s':>12}{'vs lxml':>9}  rounds")
    for key, label in ROWS:
        r = ms.get(key)
        if r is None:
            reason = res["skipped"].get(key)
            if reason:
                w(f"  {label:<38}{'skipped: ' + reason:>41}")
            continue
        rate = r["pages_per_s"]
        w(f"  {label:<38}{rate:>10,.1f}{1000 / rate if rate else 0:>10.2f}{r['median_pages_per_s']:>12,.1f}"
          f"{_show(ratio(rate, lx)):>9}  {r['rounds']}")
    wq, wl, wb = ms.get("whole-quadfleet"), ms.get("whole-lxml"), ms.get("whole-baseline")
    wa = arc.get("whole_archive") or {"file": arc["file"], "html_pages": arc["html_pages"], "repeats": 1}
    if wq and wl:
        w(f"  whole process on {wa['file']} ({wq['pages']:,} HTML pages"
          + (f": the archive written {wa['repeats']} times, start-up amortised as in a real archive)"
             if wa["repeats"] > 1 else ")") + ",")
        w(f"  as subprocesses: wall time, peak RSS via wait4 of a forked child, best of {wq['rounds']}:")
        w(f"    quadfleet extract --processes 1  {wq['seconds']:>8.3f} s {wq['pages_per_s']:>9,.1f} pages/s "
          f"{_mib(wq['peak_rss_kib']):>8.1f} MiB   (malloc: {wq.get('allocator', 'not recorded')})")
        c = res["summary"].get("crawl_cost")
        if c:
            w(f"      = ${c['total']:,.2f} per {c['pages'] / 1e9:g}-billion-page crawl: compute ${c['compute']:,.2f} "
              f"(at ${c['vcpu_hour']:g} / vCPU-h) + requests ${c['requests']:,.2f} + a month of storage "
              f"${c['storage']:,.2f} (requests and bytes measured at {c['measured_at']}: quadfleet fleet cost)")
        wn = ms.get("whole-quadfleet-no-subsets")
        if wn:
            w(f"    the same, class subsets off      {wn['seconds']:>8.3f} s {wn['pages_per_s']:>9,.1f} pages/s "
              f"{_mib(wn['peak_rss_kib']):>8.1f} MiB   (the outputs the baseline commit wrote)")
        w(f"    warcio + lxml script             {wl['seconds']:>8.3f} s {wl['pages_per_s']:>9,.1f} pages/s "
          f"{_mib(wl['peak_rss_kib']):>8.1f} MiB")
        if wb:
            w(f"    baseline-commit quadfleet extract {wb['seconds']:>7.3f} s {wb['pages_per_s']:>9,.1f} pages/s "
              f"{_mib(wb['peak_rss_kib']):>8.1f} MiB"
              + ("   (one run)" if wb["rounds"] == 1 else ""))
    elif res["skipped"].get("whole-process"):
        w(f"  whole process: skipped: {res['skipped']['whole-process']}")
    if not wb and res["skipped"].get("whole-baseline"):
        w(f"  baseline-commit quadfleet extract (whole process): skipped: {res['skipped']['whole-baseline']}")
    q = ms.get("quadfleet-all")
    s = res["summary"]
    if q:
        w(f"  quadfleet-all: {q['triples']:,} N-Quads lines; same in every round: "
          f"{'yes' if res['checks']['same_output_across_rounds'] else 'NO'}"
          + (f"; quadfleet extract wrote the same (on the repeats: qf-repeat taken out, blank nodes "
             f"normalised): {'yes' if res['checks']['whole_process_same_output'] else 'NO'}"
             if res["checks"].get("whole_process_same_output") is not None else ""))
        ev = s.get("body_evidence_pages")
        w(f"  pages the prefilter passed {q['pages_parsed']}, given a full DOM {q['pages_dom_parsed']} "
          + ("" if ev is None else f"(pages with body-level markup evidence {ev}: DOM ≤ evidence "
                                   f"{'yes' if q['pages_dom_parsed'] <= ev else 'NO'}), ")
          + f"head-only parse {q['pages_head_parsed']}; pages with triples {q['pages_with_triples']}"
          + (f"; problems: {', '.join(f'{k}: {v}' for k, v in sorted(q['errors'].items()))}" if q["errors"] else ""))
    b = res.get("baseline")
    if b:
        _print_baseline(w, b)
    w("  summary:")
    w(f"    quadfleet-all / lxml (in-process)            {_show(s['quadfleet_all_over_lxml'])}")
    if s.get("whole_process_ratio") is not None:
        w(f"    whole process: quadfleet ≈ {s['whole_process_ratio']:.2f}× lxml's pages/s "
          f"(lxml script {wl['seconds']:.3f} s / quadfleet extract {wq['seconds']:.3f} s, {wq['pages']:,} pages)")
    if s.get("whole_process_ratio_without_start") is not None:
        w(f"    whole process, each one's start-up taken out ≈ {s['whole_process_ratio_without_start']:.2f}× "
          "(both less their run on an archive with no page: what archives of thousands of pages would show)")
    like = s.get("baseline_like_for_like")
    w(f"    quadfleet-all / baseline-commit              {_show(s['quadfleet_all_over_baseline_commit'])}"
      + ("" if like is None else
         "  (identical output)" if s["baseline_output_identical"] else
         "  (like for like: same output as the baseline with its prefilter off)" if like else
         "  (OUTPUT DIFFERS: not a like-for-like speed-up)"))
    _print_paired(w, "quadfleet-all / baseline-commit, paired", s.get("quadfleet_all_over_baseline_commit_paired"))
    if s.get("whole_over_baseline_commit") is not None:
        w(f"    whole process / baseline-commit's            {_show(s['whole_over_baseline_commit'])}"
          "  (best over best)")
    _print_paired(w, "whole process / baseline-commit's, paired", s.get("whole_over_baseline_commit_paired"))
    _print_paired(w, "  the same, class subsets off, paired", s.get("whole_no_subsets_over_baseline_commit_paired"))
    w(f"    quadfleet-all / quadfleet-jsonld-microdata   {_show(s['quadfleet_all_over_jsonld_microdata'])}")
    w(f"    quadfleet-all / extruct                      {_show(s['quadfleet_all_over_extruct'])}")
    w(f"    prefilter share of quadfleet-all time        {_show(s['prefilter_share'], '.1%')}")
    w(f"    HTML pages given a full DOM                  {_show(s['dom_share'], '.1%')}"
      + ("" if s.get("body_evidence_share") is None else
         f"   (with body-level markup evidence {s['body_evidence_share']:.1%})"))
    w(f"    peak memory of quadfleet extract             "
      + ("n/a" if s["quadfleet_peak_rss_mib"] is None else f"{s['quadfleet_peak_rss_mib']:.1f} MiB")
      + ("" if s.get("baseline_peak_rss_mib") is None else
         f"   (baseline commit's: {s['baseline_peak_rss_mib']:.1f} MiB)"))


def _print_paired(w, label: str, p: dict | None) -> None:
    """A ratio of rounds taken side by side: its median, and the spread the machine gave it."""
    if not p:
        return
    w(f"    {label:<45}{p['median']:.2f}  (median of {len(p['rounds'])} rounds; "
      f"lowest {p['min']:.2f}, highest {p['max']:.2f})")


def _print_baseline(w, b: dict) -> None:
    w(f"  baseline-commit {b['ref']} ({b['sha'][:12]}, {b['method']}{', cached build' if b['cached'] else ''}; "
      f"in-process malloc: {b.get('allocator', 'not reported')}): "
      f"{b['triples']:,} N-Quads lines; same as now (blank-node labels normalised): "
      + ("yes" if b["normalised_equal"] else
         f"NO, {b['lines_only_now']:,} lines only now, {b['lines_only_baseline']:,} only at {b['ref']}"))
    off = b.get("prefilter_off")
    if off and "error" in off:
        w(f"    with its prefilter off: not run ({off['error']})")
    elif off:
        if off["normalised_equal"]:
            w(f"    same as the baseline commit with its prefilter off (every extractor on every page); "
              + (f"{b['lines_only_now']:,} lines its prefilter missed are now found" if b["lines_only_now"]
                 else "its prefilter missed nothing here"))
        else:
            w(f"    with its prefilter off (every extractor on every page, {off['triples']:,} lines): NOT the same: "
              f"{off['lines_only_now']:,} lines only now, {off['lines_only_baseline']:,} only at {b['ref']} "
              "with its prefilter off")
    if b["like_for_like"] and b["normalised_equal"]:
        return
    if not b["like_for_like"]:
        shown = [("only now", b["examples_only_now"]), (f"only at {b['ref']}", b["examples_only_baseline"])]
        if off and "error" not in off:
            shown += [("only now, vs its prefilter off", off["examples_only_now"]),
                      (f"only at {b['ref']} with its prefilter off", off["examples_only_baseline"])]
    else:
        shown = [("found now, missed by its prefilter", b["examples_only_now"])]
    for label, lines in shown:
        for line in lines:
            w(f"    {label}: {line[:220]}")
