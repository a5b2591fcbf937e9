"""Inputs read over the network, as users name them: https:// (a local HTTP server) and s3:// (boto3
against a moto S3 server over HTTP). Both stream; neither needs the archive on disk."""
from __future__ import annotations

import gzip
import http.server
import threading

import pytest
from quadfleet.coordinator.sample import build_sample
from quadfleet.worker.archive.inputs import spec

from quadfleet.cli import main
from quadfleet.worker.output.layout import decode_stats


@pytest.fixture
def http_root(tmp_path):
    handler = lambda *a, **kw: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path), **kw)  # noqa: E731
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def committed_stats(out, location):
    return decode_stats((out / "stats" / f"{spec(location).id}.json.gz").read_bytes())


def test_http_inputs_and_listing_with_an_http_prefix(http_root, tmp_path_factory, capsys):
    root, base = http_root
    build_sample(root / "crawl-data" / "a.warc.gz")
    (root / "warc.paths.gz").write_bytes(gzip.compress(b"crawl-data/a.warc.gz\ncrawl-data/missing.warc.gz\n"))
    out = tmp_path_factory.mktemp("out")
    rc = main(["extract", "--listing", base + "warc.paths.gz", "--prefix", base, "--out", str(out),
               "--processes", "1", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 1  # the missing one
    stats = committed_stats(out, base + "crawl-data/a.warc.gz")
    assert stats["html_pages"] == 4 and stats["triples"] > 0
    assert f"{base}crawl-data/missing.warc.gz: cannot fetch: HTTP Error 404" in err


def test_s3_inputs_through_a_moto_server(tmp_path, monkeypatch, capsys):
    moto_server = pytest.importorskip("moto.server")
    boto3 = pytest.importorskip("boto3")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://{host}:{port}")
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket="crawl")
        s3.put_object(Bucket="crawl", Key="seg/1/sample.warc.gz",
                      Body=build_sample(tmp_path / "sample.warc.gz").read_bytes())
        out = tmp_path / "out"
        rc = main(["extract", "s3://crawl/seg/1/sample.warc.gz", "s3://crawl/seg/1/nope.warc.gz",
                   "--out", str(out), "--processes", "1", "--quiet"])
        err = capsys.readouterr().err
        assert rc == 1
        stats = committed_stats(out, "s3://crawl/seg/1/sample.warc.gz")
        assert stats["html_pages"] == 4 and stats["bytes"] == (tmp_path / "sample.warc.gz").stat().st_size
        assert "s3://crawl/seg/1/nope.warc.gz: S3 said NoSuchKey" in err
    finally:
        server.stop()


class _DroppingHandler(http.server.BaseHTTPRequestHandler):
    """Serves one file with Range support; the first full response breaks off half-way, as a dropped
    connection does."""

    data = b""
    requests: list = []

    def do_GET(self):  # noqa: N802
        rng = self.headers.get("Range")
        type(self).requests.append(rng)
        etag = '"v1"'
        if rng:
            start = int(rng.split("=")[1].split("-")[0])
            body = self.data[start:]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(self.data) - 1}/{len(self.data)}")
        else:
            body = self.data
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", etag)
        self.end_headers()
        if not rng:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(2)  # drop it
            return
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_dropped_connection_resumes_with_a_range_request(tmp_path):
    from quadfleet.worker.config import load_config
    from quadfleet.worker.output.store import LocalStore
    from quadfleet.worker.pipeline.process import process_input

    archive = build_sample(tmp_path / "s.warc.gz")
    _DroppingHandler.data = archive.read_bytes()
    _DroppingHandler.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _DroppingHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/s.warc.gz"
        store = LocalStore(tmp_path / "out")
        store.prepare()
        stats = process_input(spec(url), store, load_config())
        local = LocalStore(tmp_path / "out-local")
        local.prepare()
        expected = process_input(spec(str(archive)), local, load_config())
    finally:
        server.shutdown()
    assert _DroppingHandler.requests[0] is None and _DroppingHandler.requests[1].startswith("bytes=")
    assert stats.html_pages == expected.html_pages == 4
    assert stats.triples == expected.triples and stats.bytes == len(_DroppingHandler.data)
