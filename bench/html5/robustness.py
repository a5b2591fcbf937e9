"""The robustness section: the hostile inputs (deep nesting, huge attribute counts and values, broken encodings,
adoption-agency stress), one subprocess per (candidate, case) (bench_trees.py ``--child robust``) with a timeout
and an address-space cap, the outcome classified (ok / exception / crash / timeout) with what the tree kept.
Holds both the parent's side and the child's (:func:`child_robust`).
"""

from __future__ import annotations

import argparse
import gc
import time
from typing import Any, Callable

from candidates import ADAPTERS, Adapter
from common import emit, fmt, run_child, table


def bad_utf8() -> bytes:
    unit = (b'<p title="\xff\xfe\x00 \xc0\x80" data-\xc3=\xed\xa0\x80 \x00x=1>t\xc3\x28\x00\xe2\x82 <x\x00y>'
            b'\xf0\x9f\x98 <!--\x00\xff--><script>\x00\xfe</script><svg>\x00\xef\xbf<![CDATA[\x00\x80]]></svg>'
            b'\xf8\x88\x80\x80\x80 &#0; &#xD800; &#x110000;</p>\n')
    return b"<!DOCTYPE html><meta charset=utf-8>" + unit * 6_000 + b"\xe2\x82"


def utf16_bom(bom: bytes) -> bytes:
    page = b"<!DOCTYPE html><html><head><title>t</title></head><body><p class=x>hello, world</p></body></html>\n"
    return bom + page * 7_000 + b"!"    # odd length: the last UTF-16 code unit is cut


CASES: dict[str, tuple[str, Callable[[], bytes]]] = {
    "nest-div-100k": ("<div> x 100,000, never closed", lambda: b"<div>" * 100_000),
    "nest-div-1m": ("<div> x 1,000,000, never closed", lambda: b"<div>" * 1_000_000),
    "attrs-200k": ("one <p> with 200,000 distinct attributes",
                   lambda: b"<p " + b" ".join(b"a%d=v" % i for i in range(200_000)) + b">x</p>"),
    "attr-value-10mb": ("one attribute value of 10 MB", lambda: b'<p title="' + b"x" * 10_000_000 + b'">x</p>'),
    "bad-utf8-nul": ("invalid UTF-8 and NUL bytes in text, names, attributes, comments, script, svg (1 MB)",
                     bad_utf8),
    "utf16le-bom-ascii": ("FF FE (UTF-16LE BOM) then 700 KB of ASCII HTML, odd length",
                          lambda: utf16_bom(b"\xff\xfe")),
    "utf16be-bom-ascii": ("FE FF (UTF-16BE BOM) then the same", lambda: utf16_bom(b"\xfe\xff")),
    "adopt-b-p-50k": ("<b><p> x 50,000", lambda: b"<b><p>" * 50_000),
    "adopt-a-table-50k": ("<a><table><a> x 50,000", lambda: b"<a><table><a>" * 50_000),
    "adopt-b-div-close-50k": ("<b><div> x 50,000 then </b> x 50,000",
                              lambda: b"<b><div>" * 50_000 + b"</b>" * 50_000),
}


def walk(adapter: Adapter, tree: Any) -> dict[str, int]:
    """What the tree kept, walked without recursion: element depth and count, the most attributes on one
    element, text characters, U+FFFD among them, and other non-ASCII ones."""
    depth_max = elements = max_attrs = chars = fffd = non_ascii = 0
    stack = [(adapter.top(tree), 0)]
    while stack:
        node, depth = stack.pop()
        kids, nattrs, text = adapter.inspect(node)
        if nattrs >= 0:
            elements, depth = elements + 1, depth + 1
            depth_max, max_attrs = max(depth_max, depth), max(max_attrs, nattrs)
        if text:
            chars += len(text)
            n_fffd = text.count("\ufffd")
            fffd += n_fffd
            non_ascii += sum(1 for ch in text if ord(ch) > 127) - n_fffd
        stack.extend((k, depth) for k in kids)
    return {"depth": depth_max, "elements": elements, "max_attrs": max_attrs, "text_chars": chars,
            "fffd": fffd, "non_ascii": non_ascii}


def child_robust(name: str, case: str) -> None:
    """(In a fresh interpreter.) One hostile input: parse, walk, free, a stage line after each."""
    adapter = ADAPTERS[name]()
    data = CASES[case][1]()
    stage = "start"
    emit(stage=stage, bytes=len(data))
    try:
        start = time.perf_counter()
        tree = adapter.bench_parse(data)
        stage = "parsed"
        emit(stage=stage, parse_s=time.perf_counter() - start)
        start = time.perf_counter()
        kept = walk(adapter, tree)
        stage = "walked"
        emit(stage=stage, walk_s=time.perf_counter() - start, **kept)
        start = time.perf_counter()
        del tree
        gc.collect()
        emit(stage="freed", free_s=time.perf_counter() - start)
    except BaseException as exc:  # noqa: B036 - RecursionError, MemoryError...: reported, not a crash
        emit(stage="exception", at=stage, type=type(exc).__name__, msg=str(exc)[:200])


STAGE_DOING = {"not started": "starting", "start": "parse", "parsed": "walk", "walked": "free", "freed": "exit"}


def classify(res: dict[str, Any]) -> dict[str, Any]:
    """A robustness child's outcome: ok / exception / crash (signal) / timeout / exit N, where, and its figures."""
    stages = {s.get("stage"): s for s in res["stages"]}
    reached = res["stages"][-1].get("stage", "?") if res["stages"] else "not started"
    info: dict[str, Any] = {"wall_s": res["wall_s"], "reached": reached}
    for st in ("parsed", "walked", "freed"):
        info.update({k: v for k, v in stages.get(st, {}).items() if k != "stage"})
    if "exception" in stages:
        e = stages["exception"]
        info.update(outcome="exception", detail=f"{e['type']} in {STAGE_DOING.get(e['at'], e['at'])}: {e['msg']}")
    elif res["timeout"]:
        info.update(outcome="timeout", detail=f"in {STAGE_DOING.get(reached, reached)}")
    elif res["signal"]:
        info.update(outcome=f"crash ({res['signal']})",
                    detail=f"in {STAGE_DOING.get(reached, reached)}; {' / '.join(res['stderr_tail'])[-160:]}")
    elif res["returncode"] != 0:
        info.update(outcome=f"exit {res['returncode']}", detail=" / ".join(res["stderr_tail"])[-160:])
    else:
        info.update(outcome="ok" if reached == "freed" else "incomplete", detail="")
    return info


def measure_robustness(args: argparse.Namespace, names: list[str], log: Callable[[str], None]) -> dict[str, Any]:
    out: dict[str, Any] = {"timeout_s": args.timeout, "mem_limit_mb": args.mem_limit_mb, "cases": {}}
    for case, (label, _) in CASES.items():
        out["cases"][case] = {"label": label, "results": {}}
        for name in names:
            res = run_child(args, ["--child", "robust", "--candidate", name, "--case", case], args.timeout)
            info = classify(res)
            out["cases"][case]["results"][name] = info
            log(f"  {case} / {name}: {info['outcome']} ({info['wall_s']:.1f} s) {info['detail'][:80]}")
    return out


def print_robustness(r: dict[str, Any]) -> None:
    print(f"one subprocess per (candidate, case), timeout {r['timeout_s']} s, address space capped at "
          f"{r['mem_limit_mb']:,} MB; time = parse (wall of the whole child if it did not finish)")
    rows = []
    for case, c in r["cases"].items():
        for name, i in c["results"].items():
            t = i.get("parse_s")
            rows.append([f"{case} / {name}", i["outcome"], fmt(t, 3) if t is not None else f"({i['wall_s']:.1f})",
                         fmt(i.get("free_s"), 3), i.get("depth", ""), i.get("elements", ""), i.get("max_attrs", ""),
                         i.get("text_chars", ""), i.get("fffd", ""), i.get("non_ascii", ""), i["detail"][:70]])
    print(table(["case / candidate", "outcome", "parse s", "free s", "depth", "elements", "max attrs", "text chars",
                 "U+FFFD", "other non-ASCII", "detail"], rows))
    print("  what the tree kept (an iterative walk after the parse): depth = elements on the deepest path (html and "
          "body included),\n  elements, the most attributes on one element, and of the text nodes' characters: "
          "U+FFFD and other non-ASCII ones\n  (a BOM honoured over the given UTF-8 turns the ASCII bytes into CJK "
          "text; a UTF-8 decode falling back to windows-1252 shows as\n  other non-ASCII characters)")
    for case, c in r["cases"].items():
        print(f"  {case}: {c['label']}")
