"""bench_crawl's report: each archive's rounds summed up into its figures, checks and ratios
(:func:`summarise_archive`), the machine it ran on, and the figures as text (the JSON is the same dict); and what
every benchmark's report shares: the machine's lines (:func:`machine_lines`), the end of a run (:func:`finish`)."""
from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

from crawlbaseline import compare
from crawlmeasure import Round, normalised, paired, ratio, summarise
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


# The measurements made in this process, on the archive itself (the others are whole processes, on the archive
# written several times over).
IN_PROCESS = ("read-warcio", "read-quadfleet", "lxml", "quadfleet-all", "quadfleet-jsonld-microdata", "prefilter",
              "extruct", "baseline-commit")


def summarise_archive(arc, rep, rounds: dict[str, list[Round]], hashes: set, whole_expected: str | None, build,
                      baseline_rounds: list[dict], baseline_off: dict | None, lines: dict | None,
                      skipped: dict[str, str], warnings: list[str], start_up: dict) -> dict[str, Any]:
    """One archive's figures, checks, baseline comparison and summary ratios; problems go to ``warnings``."""
    name = arc.name
    ms = {k: summarise(v) for k, v in rounds.items() if v}
    checks = _checks(arc, rep, rounds, ms, hashes, whole_expected, warnings)
    q, pf = ms["quadfleet-all"], ms["prefilter"]
    if pf["passed"] != q["pages_parsed"]:
        warnings.append(f"{name}: the prefilter alone passed {pf['passed']} pages, extract_input {q['pages_parsed']}")
    base = None
    if baseline_rounds and build is not None:
        ms["baseline-commit"] = summarise([Round(b["pages"], b["seconds"]) for b in baseline_rounds])
        base = compare(build, baseline_rounds, baseline_off, normalised(lines))
        if not base["same_output_across_rounds"]:
            warnings.append(f"{name}: the baseline commit wrote different N-Quads in different rounds")
        if not base["like_for_like"]:
            warnings.append(f"{name}: the N-Quads differ from {build.ref}'s, with its prefilter on and off: "
                            "the baseline-commit ratio is not like for like")
    rate = {k: m["pages_per_s"] for k, m in ms.items()}
    wq, wl, wb = ms.get("whole-quadfleet"), ms.get("whole-lxml"), ms.get("whole-baseline")
    if wb and base and wb["triples"] != base["triples"] * rep.repeats:
        warnings.append(f"{name}: the baseline commit's quadfleet extract wrote {wb['triples']} lines, not "
                        f"{rep.repeats} × {base['triples']} (was it the baseline build?)")
    comp = arc.composition
    for fmt in ("html-embedded-jsonld", "html-microdata", "html-mf-hcard"):
        seen = q["pages_with_triples_by_format"].get(fmt, 0)
        if seen != comp["pages_with"].get(fmt, 0):
            warnings.append(f"{name}: {fmt} on {seen} pages in the run, {comp['pages_with'].get(fmt, 0)} "
                            "when the mix was made (copies under other URLs extract differently?)")
    mib = lambda m: m["peak_rss_kib"] / 1024 if m and m["peak_rss_kib"] else None  # noqa: E731
    return {
        "measurements": ms, "skipped": skipped, "checks": checks, "baseline": base,
        "summary": {
            "quadfleet_all_over_lxml": ratio(rate.get("quadfleet-all"), rate.get("lxml")),
            "whole_process_ratio": ratio(wl["seconds"], wq["seconds"]) if wq and wl else None,
            "whole_process_ratio_without_start": without_start(ms, start_up),
            "whole_process_pages": wq["pages"] if wq else None,
            "quadfleet_all_over_baseline_commit": ratio(rate.get("quadfleet-all"), rate.get("baseline-commit")),
            "quadfleet_all_over_baseline_commit_paired": paired(rounds.get("quadfleet-all"),
                                                                [Round(b["pages"], b["seconds"])
                                                                 for b in baseline_rounds]),
            "whole_over_baseline_commit": ratio(rate.get("whole-quadfleet"), rate.get("whole-baseline")),
            "whole_over_baseline_commit_paired": paired(rounds.get("whole-quadfleet"), rounds.get("whole-baseline")),
            "whole_no_subsets_over_baseline_commit_paired": paired(rounds.get("whole-quadfleet-no-subsets"),
                                                                   rounds.get("whole-baseline")),
            "baseline_output_identical": None if base is None else base["normalised_equal"],
            "baseline_like_for_like": None if base is None else base["like_for_like"],
            "baseline_missed_by_its_prefilter": None if base is None else base["missed_by_its_prefilter"],
            "quadfleet_all_over_jsonld_microdata": ratio(rate.get("quadfleet-all"),
                                                         rate.get("quadfleet-jsonld-microdata")),
            "quadfleet_all_over_extruct": ratio(rate.get("quadfleet-all"), rate.get("extruct")),
            "prefilter_share": ratio(pf["seconds"], q["seconds"]),
            "dom_pages": q["pages_dom_parsed"],
            "dom_share": ratio(q["pages_dom_parsed"], arc.html_pages),
            "body_evidence_pages": pf["body_evidence"],
            "body_evidence_share": ratio(pf["body_evidence"], arc.html_pages),
            "dom_within_body_evidence": q["pages_dom_parsed"] <= pf["body_evidence"],
            "quadfleet_peak_rss_mib": mib(wq),
            "crawl_cost": crawl_dollars(wq["pages_per_s"]) if wq else None,
            "lxml_script_peak_rss_mib": mib(wl),
            "baseline_peak_rss_mib": mib(wb),
        },
        "nquads_lines": q["triples"],
    }


def _checks(arc, rep, rounds: dict[str, list[Round]], ms: dict, hashes: set, whole_expected: str | None,
            warnings: list[str]) -> dict[str, Any]:
    """Whether quadfleet-all wrote the same in every round, and the whole processes what it wrote; every
    measurement's page count checked against the archive's (problems go to ``warnings``)."""
    name = arc.name
    checks: dict[str, Any] = {"same_output_across_rounds": len(hashes) == 1}
    if not checks["same_output_across_rounds"]:
        warnings.append(f"{name}: quadfleet-all wrote different N-Quads in different rounds")
    for key, check, how in (("whole-quadfleet", "whole_process_same_output", "subprocess"),
                            ("whole-quadfleet-no-subsets", "whole_no_subsets_same_output",
                             "subprocess, class subsets off")):
        whole = rounds.get(key)
        if whole:
            checks[check] = {w.info["lines_hash"] for w in whole} == {whole_expected}
            if not checks[check]:
                warnings.append(f"{name}: quadfleet extract ({how}) on {rep.path.name} wrote other N-Quads than "
                                f"extract_input on {arc.path.name}, {rep.repeats} times over")
    for k, m in ms.items():
        want = arc.html_pages if k in IN_PROCESS else rep.html_pages
        if m["pages"] != want:
            warnings.append(f"{name}: {k} saw {m['pages']} pages, the archive holds {want}")
        if not m["pages_agree_across_rounds"]:
            warnings.append(f"{name}: {k} saw different page counts in different rounds")
    return checks


def without_start(ms: dict, start_up: dict) -> float | None:
    """The whole-process ratio with each process's start and end (its run on an archive with no page) taken
    out of its time: the ratio a crawl's archives, of thousands of pages each, would show."""
    wq, wl, sq, sl = ms.get("whole-quadfleet"), ms.get("whole-lxml"), start_up.get("quadfleet"), start_up.get("script")
    if not (wq and wl and sq and sl) or wq["seconds"] <= sq["seconds"]:
        return None
    return ratio(wl["seconds"] - sl["seconds"], wq["seconds"] - sq["seconds"])


def crawl_dollars(pages_per_s: float) -> dict[str, Any] | None:
    """$ per 3-billion-page crawl at the whole process's pages/s, through the fleet's cost model: compute at
    the default spot price, plus the requests and a month of storage of its shipped measurement (`quadfleet
    fleet measure`); None if that measurement cannot be read."""
    from quadfleet.coordinator.fleet import cost
    from quadfleet.coordinator.fleet.measured import MeasurementError, load

    try:
        measured = load()
    except MeasurementError:
        return None
    c = cost.crawl_cost(measured, pages_per_s)
    return {"pages_per_s": pages_per_s, "pages": c.crawl.pages, "archives": c.crawl.archives,
            "vcpu_hour": c.basis.vcpu_hour, "compute": c.compute, "requests": c.requests, "storage": c.storage,
            "total": c.total, "measured_at": measured.source.get("commit")}


def cpu_model() -> str:
    """The CPU's model name, as /proc/cpuinfo gives it ("" where there is none)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return ""


def machine_info() -> dict[str, Any]:
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
            "platform": platform.platform(), "cpu_count": os.cpu_count(), "cpu_model": cpu_model(),
            "versions": versions, "git": git}


def machine_lines(m: dict[str, Any]) -> list[str]:
    """:func:`machine_info`'s figures as a report's first lines: Python and the machine, the versions, the commit."""
    lines = [f"machine: Python {m['python']} ({m['implementation']}), {m['platform']}, cpu_count={m['cpu_count']}"
             f"{', ' + m['cpu_model'] if m['cpu_model'] else ''}",
             "versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items())]
    g = m["git"]
    if g:
        lines.append(f"repo: {g['commit'][:12]}" + (f" + uncommitted changes in {g['uncommitted_files']} tracked "
                                                    "file(s)" if g["uncommitted_files"] else " (clean)"))
    return lines


def finish(report: dict[str, Any], print_report: Callable[[dict], None], json_path: Path | None,
           default: Callable | None = None) -> int:
    """How a benchmark ends: its report printed, then every figure written as JSON to ``json_path`` if given
    (``default``: json.dumps's, for what JSON does not hold); the exit status, 0."""
    print_report(report)
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=1, default=default) + "\n", encoding="utf-8")
        print(f"figures written to {json_path}")
    return 0


def _show(v, fmt=".2f", none="n/a") -> str:
    return none if v is None else format(v, fmt)


def _mib(kib) -> float:
    return kib / 1024 if kib else 0.0


def print_report(report: dict[str, Any], out=sys.stdout) -> None:
    w = lambda s="": print(s, file=out)  # noqa: E731
    m = report["machine"]
    w(f"quadfleet crawl benchmark  {report['timestamp']}")
    for line in machine_lines(m):
        w(line)
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
    """One archive's figures: the in-process measurements, the whole processes, the checks, the summary."""
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
    _print_whole(w, arc, res)
    q = ms.get("quadfleet-all")
    if q:
        _print_checks(w, q, res)
    b = res.get("baseline")
    if b:
        _print_baseline(w, b)
    _print_summary(w, res)


def _print_whole(w, arc: dict, res: dict) -> None:
    """The whole processes: quadfleet extract, the warcio + lxml script and the baseline commit's, as subprocesses."""
    ms = res["measurements"]
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


def _print_checks(w, q: dict, res: dict) -> None:
    """What quadfleet-all wrote: the same in every round and as the whole process; what the prefilter passed."""
    s = res["summary"]
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


def _print_summary(w, res: dict) -> None:
    """The ratios: against lxml, the baseline commit (best over best, and paired) and extruct; shares, memory."""
    s, ms = res["summary"], res["measurements"]
    wq, wl = ms.get("whole-quadfleet"), ms.get("whole-lxml")
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
    w("    peak memory of quadfleet extract             "
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
            w("    same as the baseline commit with its prefilter off (every extractor on every page); "
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
