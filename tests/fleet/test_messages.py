"""The fleet's message shape: what enqueue writes, the worker reads back; anything else is refused."""
from __future__ import annotations

import json

import pytest
from quadfleet.worker.archive.inputs import spec
from quadfleet.worker.config import load_config
from quadfleet.worker.errors import ConfigError
from quadfleet.worker.queue.messages import MalformedMessage, WorkItem, parse_message

URL = "s3://commoncrawl/crawl-data/CC-MAIN-2024-22/segments/1/warc/CC-MAIN-1-00000.warc.gz"


def good() -> dict:
    return json.loads(WorkItem("run-1", spec(URL), "s3://out/prefix").body())


def test_round_trip():
    item = parse_message(json.dumps(good()))
    assert item.spec == spec(URL) and item.run == "run-1" and item.out == "s3://out/prefix"


@pytest.mark.parametrize("change, why", [
    (lambda d: "not json", "not JSON"),
    (lambda d: [d], "not a JSON object"),
    (lambda d: {**d, "extra": 1}, "unexpected ['extra']"),
    (lambda d: {k: v for k, v in d.items() if k != "run"}, "missing ['run']"),
    (lambda d: {**d, "quadfleet": 2}, "version 2"),
    (lambda d: {**d, "run": ""}, "run must be a non-empty string"),
    (lambda d: {**d, "input": "/local/file.warc.gz"}, "is not an s3:// or https:// URL"),
    (lambda d: {**d, "out": "/tmp/out"}, "not an s3://BUCKET/PREFIX URL"),
    (lambda d: {**d, "input_id": "someone-else-00000000"}, "does not belong to input"),
])
def test_malformed_messages_are_refused_with_a_reason(change, why):
    changed = change(good())
    body = changed if isinstance(changed, str) else json.dumps(changed)
    with pytest.raises(MalformedMessage) as info:
        parse_message(body)
    assert why in str(info.value)


def test_queue_settings_are_validated(tmp_path):
    cfg = tmp_path / "q.toml"
    cfg.write_text("[queue]\nvisibility_timeout = 3\nwait_time_seconds = 1\n")
    c = load_config(str(cfg))
    assert c.queue.visibility_timeout == 3 and c.queue.wait_time_seconds == 1 and c.queue.max_receive_count == 3
    assert c.hash == load_config().hash, "fleet settings must not change what is extracted"
    for bad, msg in [("[queue]\nwait_time_seconds = 30", "queue.wait_time_seconds"),
                     ("[queue]\npoll = 1", "queue.poll: unknown key"),
                     ('[worker]\nspot_endpoint = "ftp://x"', "worker.spot_endpoint")]:
        cfg.write_text(bad)
        with pytest.raises(ConfigError) as info:
            load_config(str(cfg))
        assert msg in str(info.value)


def selection_doc() -> dict:
    from quadfleet.worker.archive.inputs import selection_spec

    item = selection_spec(URL, [(500, 20, "https://b.example/"), (10, 30, "https://a.example/")])
    return json.loads(WorkItem("run-1", item, "s3://out/prefix").body())


def test_a_selection_round_trips_with_its_ranges():
    doc = selection_doc()
    assert doc["ranges"] == [[10, 30, "https://a.example/"], [500, 20, "https://b.example/"]]
    item = parse_message(json.dumps(doc))
    assert item.spec.ranges == ((10, 30, "https://a.example/"), (500, 20, "https://b.example/"))
    assert "-sel-" in item.spec.id and item.spec.id.startswith(spec(URL).id)


@pytest.mark.parametrize("change, why", [
    (lambda d: {**d, "ranges": []}, "ranges must be a list of 1 to"),
    (lambda d: {**d, "ranges": "10-20"}, "ranges must be a list"),
    (lambda d: {**d, "ranges": [[10, 0, "u"]]}, "ranges[0] is not"),
    (lambda d: {**d, "ranges": [[-1, 5, "u"]]}, "ranges[0] is not"),
    (lambda d: {**d, "ranges": [[1.5, 5, "u"]]}, "ranges[0] is not"),
    (lambda d: {**d, "ranges": [[10, 5]]}, "ranges[0] is not"),
    (lambda d: {**d, "ranges": list(reversed(d["ranges"]))}, "not sorted"),
    (lambda d: {**d, "ranges": d["ranges"][:1]}, "does not belong to selection"),
    (lambda d: {k: v for k, v in d.items() if k != "ranges"}, "does not belong to input"),
])
def test_bad_selections_are_refused(change, why):
    with pytest.raises(MalformedMessage) as exc:
        parse_message(json.dumps(change(selection_doc())))
    assert why in str(exc.value)


def test_only_an_integer_1_is_version_1():
    """Issue 14 item 5: `"quadfleet": true` was taken for version 1 (True == 1 in Python)."""
    for version in (True, 1.0, "1"):
        with pytest.raises(MalformedMessage) as info:
            parse_message(json.dumps({**good(), "quadfleet": version}))
        assert "message version" in str(info.value)


def test_http_inputs_only_when_allowed():
    """Issue 14 item 5: an http:// input (say, a loopback address) is refused unless [worker] allow_http."""
    uri = "http://127.0.0.1:8080/a.warc.gz"
    doc = {**good(), "input": uri, "input_id": spec(uri).id}
    with pytest.raises(MalformedMessage) as info:
        parse_message(json.dumps(doc))
    assert "http:// URL" in str(info.value) and "allow_http" in str(info.value)
    assert parse_message(json.dumps(doc), allow_http=True).spec.uri == uri
    for uri in ("ftp://host/a.warc.gz", "file:///etc/passwd"):
        with pytest.raises(MalformedMessage):
            parse_message(json.dumps({**doc, "input": uri, "input_id": spec(uri).id}), allow_http=True)


def test_refusals_quote_values_cut_short():
    """Issue 14 item 5: a 250 KB field was logged whole; a refusal quotes at most a few hundred characters."""
    huge = "s3://b/" + "x" * 250_000
    for doc in ({**good(), "input": huge}, {**good(), "quadfleet": "v" * 250_000}, {**good(), "k" * 250_000: 1},
                {**good(), "out": "/" + "o" * 250_000}):
        with pytest.raises(MalformedMessage) as info:
            parse_message(json.dumps(doc))
        assert len(str(info.value)) < 500


def test_allow_http_is_validated(tmp_path):
    cfg = tmp_path / "w.toml"
    assert load_config().worker.allow_http is False
    cfg.write_text("[worker]\nallow_http = true\n")
    assert load_config(str(cfg)).worker.allow_http is True
    cfg.write_text('[worker]\nallow_http = "yes"\n')
    with pytest.raises(ConfigError) as info:
        load_config(str(cfg))
    assert "worker.allow_http" in str(info.value)
