"""Smoke test of bench/bench_crawl.py: one round on a few real pages and a small crawl mix, so the benchmark
cannot rot unnoticed between full runs. Timings are not checked (they depend on the machine), only that the
archives hold what they should, the mix has a crawl's share of structured data, and every measurement ran."""
from __future__ import annotations

import io
import json
import zlib

import pytest
from conftest import corpus_path, load_bench


def test_bench_crawl_smoke(tmp_path, capsys):
    corpus = corpus_path()
    corpus_path("real-pages", "PROVENANCE.tsv")
    corpus_path("warc-commoncrawl")
    bench = load_bench("bench_crawl")
    out_json = tmp_path / "figures.json"

    assert bench.main(["--smoke", "--corpus", str(corpus), "--workdir", str(tmp_path / "work"),
                       "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    report = json.loads(out_json.read_text())

    assert report["warnings"] == [], report["warnings"]
    real, mix = report["archives"]["real-pages"], report["archives"]["crawl-mix"]
    assert real["html_pages"] == bench.SMOKE_REAL_PAGES
    assert mix["html_pages"] == bench.SMOKE_MIX_PAGES
    assert mix["records"] > mix["html_pages"]  # the Common Crawl request/metadata/warcinfo records came along
    assert 0.45 <= mix["composition"]["share"]["any"] <= 0.57, mix["composition"]
    assert mix["composition"]["sources"]["cc_pages"] > 0

    # The archives on disk are what the report says: gzip per record, one response per page, distinct URLs.
    from warcio.archiveiterator import ArchiveIterator

    data = (tmp_path / "work" / "crawl-mix.warc.gz").read_bytes()
    urls = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(io.BytesIO(data))
            if r.rec_type == "response"]
    assert len(urls) == len(set(urls)) == mix["html_pages"]
    assert zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[:4000])[:8] == b"WARC/1.0"  # first member

    for name, arc in report["archives"].items():
        res = report["results"][name]
        ms = res["measurements"]
        for key in ("read-warcio", "read-quadfleet", "lxml", "quadfleet-all", "quadfleet-jsonld-microdata",
                    "prefilter", "whole-quadfleet", "whole-lxml"):
            assert ms[key]["pages_per_s"] > 0, (name, key)
            # the whole processes read the archive written --whole-repeat times (2 in smoke mode)
            want = arc["html_pages"] * (report["whole_repeat"] if key.startswith("whole-") else 1)
            assert ms[key]["pages"] == want, (name, key)
        assert report["whole_repeat"] == 2 and arc["whole_archive"]["html_pages"] == 2 * arc["html_pages"]
        assert (tmp_path / "work" / arc["whole_archive"]["file"]).is_file()
        assert "extruct" not in ms and "baseline-commit" not in ms and "whole-baseline" not in ms  # off in smoke mode
        assert ms["quadfleet-all"]["triples"] > 0
        assert res["checks"]["same_output_across_rounds"] and res["checks"]["whole_process_same_output"]
        assert res["checks"]["whole_no_subsets_same_output"]
        s = res["summary"]
        assert s["quadfleet_all_over_lxml"] > 0 and s["whole_process_ratio"] > 0
        assert 0 < s["prefilter_share"] < 1
        assert 0 < s["dom_pages"] <= s["body_evidence_pages"] <= arc["html_pages"]  # the bar
        assert s["whole_process_pages"] == arc["whole_archive"]["html_pages"]
        assert s["quadfleet_peak_rss_mib"] > 0
        # dollars per crawl beside pages/s, through the fleet's cost model at the whole process's rate
        c = s["crawl_cost"]
        assert c["pages_per_s"] == ms["whole-quadfleet"]["pages_per_s"] and c["pages"] == 3e9
        assert c["total"] == pytest.approx(c["compute"] + c["requests"] + c["storage"])
        assert c["compute"] == pytest.approx(3e9 / c["pages_per_s"] / 3600 * c["vcpu_hour"])
        assert f"= ${c['total']:,.2f} per 3-billion-page crawl" in out
    # start-up alone: both processes on an archive with no page, and the ratio with it taken out of each
    start = report["start_up"]
    assert start["quadfleet"]["pages"] == start["script"]["pages"] == 0
    assert 0 < start["quadfleet"]["seconds"] and 0 < start["script"]["seconds"]
    assert start["quadfleet"]["rounds"] == report["rounds"] and start["quadfleet"]["triples"] == 0
    for name in report["archives"]:
        ms, s = report["results"][name]["measurements"], report["results"][name]["summary"]
        got = s["whole_process_ratio_without_start"]
        if ms["whole-quadfleet"]["seconds"] > start["quadfleet"]["seconds"]:
            assert got == pytest.approx((ms["whole-lxml"]["seconds"] - start["script"]["seconds"])
                                        / (ms["whole-quadfleet"]["seconds"] - start["quadfleet"]["seconds"]))
        else:
            assert got is None
    assert "start-up alone (an archive with no page" in out
    assert "quadfleet ≈" in out and "crawl-mix.warc.gz (48 HTML pages)" in out
    assert "whole process on crawl-mix-x2.warc.gz (96 HTML pages" in out
    assert "the same, class subsets off" in out  # the whole process as the baseline commit ran it
    assert "body-level markup evidence" in out

    # bench_instructions.py counts m_quadfleet without the read-back: the same extraction, nothing read back
    from crawlmeasure import m_quadfleet
    from quadfleet.worker.config import load_config

    mix_path = tmp_path / "work" / "crawl-mix.warc.gz"
    counted, lines = m_quadfleet(mix_path, mix_path.read_bytes(), load_config(None), tmp_path / "scratch",
                                 read_back=False)
    assert lines == {} and counted.info["lines_hash"] is None
    assert counted.pages == mix["html_pages"]
    assert counted.info["triples"] == report["results"]["crawl-mix"]["measurements"]["quadfleet-all"]["triples"]


def test_repeat_urls():
    """The whole-process archive's repeats get distinct URLs, and their N-Quads map back to the first copy's."""
    bench = load_bench("bench_crawl")
    from harness.archives import repeat_url

    for url in ("http://a.example/p", "http://a.example/p?x=1&copy=3", "https://a.example/?q#f"):
        again = repeat_url(url, 4)
        assert again != url and repeat_url(url, 0) == url and repeat_url(url, 5) != again
        line = f"<{again}> <http://schema.org/url> <{again.split('#')[0]}#org> <{again}> ."
        assert bench.strip_repeat(line) == f"<{url}> <http://schema.org/url> <{url.split('#')[0]}#org> <{url}> ."


def test_og_like_predicates():
    bench = load_bench("bench_crawl")
    lines = {"html-rdfa": ['<http://a.example/> <http://ogp.me/ns#title> "t" <http://a.example/> .',
                           '<http://a.example/> <https://api.w.org/> <http://a.example/wp-json/> <http://a.example/> .',
                           '<http://a.example/> <al:ios:url> "x" <http://a.example/> .']}
    assert bench.page_features(lines) == {"html-rdfa", "og"}
    lines["html-rdfa"].append('<http://a.example/> <http://purl.org/dc/terms/title> "t" <http://a.example/> .')
    assert bench.page_features(lines) == {"html-rdfa", "og", "rdfa-beyond-og", "any"}
    assert "any" in bench.page_features({"html-mf-hcard": ["_:b0 <x:y> \"z\" <http://a.example/> ."]})


def test_paired_ratios():
    """Side-by-side rounds give one ratio each (pages/s now over pages/s before), summarised by the median."""
    load_bench("bench_crawl")
    from crawlmeasure import Round, paired

    now = [Round(480, 1.0), Round(480, 2.0), Round(480, 1.2)]
    before = [Round(480, 3.0), Round(480, 5.0), Round(480, 4.2)]
    got = paired(now, before)
    assert got["rounds"] == pytest.approx([3.0, 2.5, 3.5])
    assert (got["median"], got["min"], got["max"]) == pytest.approx((3.0, 2.5, 3.5))
    assert paired(now, []) is None and paired(None, before) is None
    assert paired(now[:2], before)["rounds"] == [3.0, 2.5]  # a round without its pair is left out
