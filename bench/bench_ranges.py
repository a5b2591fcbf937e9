"""Index-driven extraction against whole-file extraction of the same archives, over HTTP.

Serves the corpus archives from a local HTTP server that honours Range requests and counts what it sends,
indexes them with cdxj-indexer, selects a fraction of the HTML captures (every k-th, ``--every``), and
extracts (a) the whole archives and (b) only the selection through the index, in the same run, with one
process. Prints bytes sent, requests, seconds and pages for each, and the ratios b/a.

    python bench/bench_ranges.py [--every 10] [--latency 0.03] [--corpus ../shared/corpus] [--json FILE]

A third run reads the selection one request at a time (QUADFLEET_RANGE_PREFETCH=1) to show what keeping
several reads in flight buys when every request waits ``--latency`` seconds for its first byte.
"""
from __future__ import annotations

import argparse
import gzip
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ARCHIVES = ["warc-commoncrawl/resiliparse-CC-MAIN-2020-34-sample.warc.gz", "warc-commoncrawl/whirlwind.warc.gz",
            "warc-real-misc/dolma-sample-0000.warc.gz", "warc-real-misc/dolma-sample-0001.warc.gz",
            "warc-real-misc/ukwa-BL-20140325121225068-00000-32090_opera_8443.warc.gz",
            "pywb-sample-archive/warcs/iana.warc.gz"]


class Counting(http.server.ThreadingHTTPServer):
    sent = 0
    requests = 0
    daemon_threads = True


def serve(root: Path, latency: float) -> Counting:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            time.sleep(latency)  # time to first byte, as an object store has it
            path = root / self.path.lstrip("/")
            data = path.read_bytes()
            m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range") or "")
            if m:
                start = int(m.group(1))
                end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
                body = data[start:end + 1]
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
            else:
                body = data
                self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.server.sent += len(body)
            self.server.requests += 1

    server = Counting(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run(argv: list[str], server: Counting, env: dict | None = None) -> dict:
    server.sent = server.requests = 0
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "quadfleet.cli", *argv, "--quiet", "--processes", "1"],
                          capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"quadfleet {' '.join(argv)} failed:\n{proc.stderr}")
    out = Path(argv[argv.index("--out") + 1])
    docs = [json.loads(gzip.decompress(p.read_bytes())) for p in (out / "stats").glob("*.json.gz")]
    return {"bytes_sent": server.sent, "requests": server.requests, "seconds": round(seconds, 2),
            "extract_seconds": round(sum(d["duration_s"] for d in docs), 3),
            "html_pages": sum(d["html_pages"] for d in docs), "triples": sum(d["triples"] for d in docs)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus"))
    ap.add_argument("--every", type=int, default=10, help="select every k-th HTML capture (default 10)")
    ap.add_argument("--latency", type=float, default=0.03,
                    help="seconds the server waits before answering each request (default 0.03, about S3's "
                         "time to first byte)")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    archives = [corpus / a for a in ARCHIVES if (corpus / a).exists()]
    if not archives:
        sys.exit(f"no corpus archives under {corpus}")
    indexer = shutil.which("cdxj-indexer") or str(Path(sys.executable).with_name("cdxj-indexer"))
    tmp = Path(tempfile.mkdtemp(prefix="bench-ranges-"))
    try:
        lines = subprocess.run([indexer, "--dir-root", ".", *[str(a.relative_to(corpus)) for a in archives]],
                               cwd=corpus, check=True, capture_output=True, text=True).stdout.splitlines()
        html = [ln for ln in lines if json.loads(ln.split(" ", 2)[2]).get("mime") == "text/html"]
        chosen = html[::args.every]
        (tmp / "sel.cdxj").write_text("\n".join(chosen) + "\n")
        server = serve(corpus, args.latency)
        base = f"http://127.0.0.1:{server.server_address[1]}"
        whole = run(["extract", *[f"{base}/{a.relative_to(corpus)}" for a in archives], "--out", str(tmp / "w")],
                    server)
        sel = run(["extract", "--index", str(tmp / "sel.cdxj"), "--prefix", base, "--out", str(tmp / "s")], server)
        serial = run(["extract", "--index", str(tmp / "sel.cdxj"), "--prefix", base, "--out", str(tmp / "s1")],
                     server, env={**os.environ, "QUADFLEET_RANGE_PREFETCH": "1"})
        server.shutdown()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    figures = {"archives": len(archives), "html_captures": len(html), "selected": len(chosen),
               "latency_s": args.latency, "whole": whole, "selection": sel, "selection_one_read_at_a_time": serial,
               "ratio_bytes": round(sel["bytes_sent"] / whole["bytes_sent"], 4),
               "ratio_seconds": round(sel["seconds"] / whole["seconds"], 3),
               "ratio_extract_seconds": round(sel["extract_seconds"] / max(whole["extract_seconds"], 1e-9), 3)}
    print(f"{len(archives)} archives, {len(html)} HTML captures, {len(chosen)} selected (every {args.every})")
    for name in ("whole", "selection", "selection_one_read_at_a_time"):
        f = figures[name]
        print(f"  {name:28}  {f['bytes_sent']:>10,} bytes  {f['requests']:>4} requests  {f['html_pages']:>4} pages  "
              f"{f['seconds']:6.2f} s (command)  {f['extract_seconds']:6.3f} s (in the worker)")
    print(f"  selection / whole: bytes {figures['ratio_bytes']:.3f}, command time {figures['ratio_seconds']:.2f}, "
          f"worker time {figures['ratio_extract_seconds']:.2f}; reads in flight vs one at a time: worker time "
          f"{serial['extract_seconds'] / max(sel['extract_seconds'], 1e-9):.1f}x faster")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
