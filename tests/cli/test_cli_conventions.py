"""The command line as users of the aws CLI and warcio expect it (issue 16, items 1–7): help with real
examples, output that stays whole when piped, errors that blame the right option, each failure said once,
--profile / --region / --endpoint-url everywhere AWS is reached, clear words for "status"."""
from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from conftest import REPO, corpus_path, one_line_error
from quadfleet.coordinator.sample import build_sample
from quadfleet.worker.archive.inputs import spec
from quadfleet.worker.extractors import EXTRACTORS

from quadfleet.cli import main
from quadfleet.cli.parser import build_parser, command_named

CLI = [sys.executable, "-m", "quadfleet.cli"]


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def run_cli(args: list[str], env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The CLI in its own process, stdout and stderr pipes (not a terminal), a narrow COLUMNS as CI has."""
    env = dict(os.environ if env is None else env, COLUMNS="80", PYTHONUNBUFFERED="1")
    return subprocess.run(CLI + args, env=env, capture_output=True, text=True, timeout=timeout, check=False)


# -- item 1: help ------------------------------------------------------------------------------------------

def parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, parser) for the top level and every subcommand, nested ones too."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from parsers(child, path + (name,))


def examples(parser: argparse.ArgumentParser) -> list[str]:
    text = parser.epilog or ""
    assert "\nexamples:\n" in "\n" + text, f"{parser.prog}: no examples"
    block = text.split("examples:\n", 1)[1]
    return [line.strip() for line in block.splitlines() if line.strip()]


def test_the_description_names_every_format_family():
    description = build_parser().description
    for family in ("JSON-LD", "microdata", "RDFa", "microformats"):
        assert family in description, family


def test_every_command_has_a_description_and_ends_with_real_examples():
    """Each example is parsed by the real parser (not run): it must name this command and be valid."""
    seen = 0
    for path, parser in parsers(build_parser()):
        assert parser.description, f"{parser.prog}: no description"
        lines = examples(parser)
        assert 2 <= len(lines) <= 3, (parser.prog, lines)
        assert parser.format_help().rstrip().endswith(lines[-1]), f"{parser.prog}: examples are not last"
        for line in lines:
            words = shlex.split(line, comments=True)
            assert words[0] == "quadfleet", line
            if path:
                assert tuple(words[1:1 + len(path)]) == path, f"{parser.prog}: example of another command: {line}"
            try:
                args = build_parser().parse_args(words[1:])
            except SystemExit as exc:
                if words[1:] and path == () and exc.code == 0:
                    continue
                raise AssertionError(f"{parser.prog}: the example does not parse: {line}") from None
            if parser.get_default("func") is not None:
                assert args.func is parser.get_default("func"), line
            seen += 1
    assert seen >= 40


def test_every_option_has_help():
    for _, parser in parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._SubParsersAction, argparse._HelpAction)):
                continue
            assert action.help, f"{parser.prog} {'/'.join(action.option_strings) or action.dest}: no help"


@pytest.mark.parametrize("command", ["page", "extract", "enqueue"])
def test_formats_help_lists_the_registered_format_ids(command):
    help_text = build_parser()._subparsers._group_actions[0].choices[command].format_help()
    for fmt in EXTRACTORS:
        assert re.search(rf"(?<![\w-]){re.escape(fmt)}(?![\w-])", help_text), (command, fmt)


def test_a_command_parsed_alone_is_parsed_as_by_the_whole_parser():
    """``main`` builds only the parser of the command its arguments name (start-up time): that parser must be
    the whole parser's one, help, options, defaults and nested commands included, and the whole parser
    still answers what names no command."""
    whole = dict(build_parser()._subparsers._group_actions[0].choices)
    for name, full in whole.items():
        assert command_named([name, "--help"]) == name
        alone = build_parser(name)._subparsers._group_actions[0].choices
        assert list(alone) == [name]
        for (path, a), (_, b) in zip(parsers(alone[name]), parsers(full), strict=True):
            assert a.format_help() == b.format_help(), path
            assert a._defaults == b._defaults, path
            assert {x.dest: x.default for x in a._actions} == {x.dest: x.default for x in b._actions}, path
    for argv in ([], ["--version"], ["-h"], ["extrakt", "x"], ["x.warc.gz", "extract"]):
        assert command_named(argv) is None, argv


def test_help_is_printed_for_every_command(capsys):
    for path, _ in parsers(build_parser()):
        with pytest.raises(SystemExit) as exc:
            main([*path, "--help"])
        assert exc.value.code == 0
        out = capsys.readouterr().out
        assert "examples:" in out and "Traceback" not in out


# -- item 2: piped output is whole --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def piped_sample(tmp_path_factory):
    out = tmp_path_factory.mktemp("piped") / "sample-out"
    sample = run_cli(["sample", "--out", str(out)])
    assert sample.returncode == 0, sample.stderr
    stats = run_cli(["stats", str(out), "--processes", "1"])
    assert stats.returncode == 0, stats.stderr
    return sample, stats, out


def test_piped_summary_is_never_wrapped_or_cut(piped_sample):
    sample, _, _ = piped_sample
    out = sample.stdout.splitlines()
    assert "…" not in sample.stdout
    title = [line for line in out if line.startswith("1 archive,")]
    assert len(title) == 1 and re.search(r", [\d.]+ s, [\d,]+ pages/s$", title[0]), sample.stdout
    header = [line for line in out if "format" in line and "prefilter hits" in line]
    assert header and all(h in header[0] for h in ("pages with triples", "triples", "typed entities")), sample.stdout
    assert any(line.startswith("| html-microdata ") and line.endswith("|") for line in out), sample.stdout
    # issue 41: not "pages and triples skipped": most kinds keep the page (a block, a triple, a format lost)
    assert "problems counted (each lost a page, a format, a block or a triple at most; archives read on)" in out, \
        sample.stdout
    for line in out + sample.stderr.splitlines():
        assert line == line.rstrip(), f"padded: {line!r}"
    assert "1 committed, 0 already committed, 0 failed; outputs in" in sample.stderr


def test_piped_stats_table_headers_are_whole(piped_sample):
    _, stats, _ = piped_sample
    out = stats.stdout.splitlines()
    assert "…" not in stats.stdout
    header = [line for line in out if line.startswith("| format")]
    assert header, stats.stdout
    for column in ("pages", "PLDs", "typed entities", "triples", "triples/page", "triples/PLD"):
        assert f" {column} " in header[0], (column, header[0])
    assert re.fullmatch(r"1 archive, .* HTML pages, .* typed entities, \d+ triples", out[0]), out[0]


# -- item 3: option errors blame the option ------------------------------------------------------------------

def test_a_bad_formats_flag_is_blamed_on_the_flag(tmp_path, capsys):
    page = tmp_path / "p.html"
    page.write_text("<html></html>")
    assert main(["page", str(page), "--formats", "rdfa"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith("quadfleet: --formats: unknown format 'rdfa' (did you mean html-rdfa?) (known: "
                           "html-embedded-jsonld, "), line
    assert "config" not in line
    # issue 24: every unknown format is named, not only the first
    assert main(["page", str(page), "--formats", "jsonld,microdata,html-rdfa,nonsense"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith("quadfleet: --formats: unknown formats 'jsonld' (did you mean html-embedded-jsonld?), "
                           "'microdata' (did you mean html-microdata?), 'nonsense' (known: "), line
    cfg = tmp_path / "mine.toml"
    cfg.write_text('formats = ["html-microdata"]\n')
    assert main(["page", str(page), "--config", str(cfg), "--formats", "html-microdata,html-microdata"]) == 2
    assert one_line(capsys.readouterr().err) == "quadfleet: --formats: lists a format twice"


def test_a_bad_formats_value_in_a_config_file_still_names_the_file(tmp_path, capsys):
    cfg = tmp_path / "mine.toml"
    cfg.write_text('formats = ["rdfa"]\n')
    assert main(["page", str(tmp_path / "p.html"), "--config", str(cfg)]) == 2
    assert one_line(capsys.readouterr().err).startswith(f"quadfleet: {cfg}: formats: unknown format 'rdfa'")


@pytest.mark.parametrize("where", ["afile", "afile/sub"])
def test_out_on_a_file_is_a_usage_error_naming_out(tmp_path, capsys, where):
    (tmp_path / "afile").write_text("")
    archive = build_sample(tmp_path / "s.warc.gz")
    out = tmp_path / where
    assert main(["extract", str(archive), "--out", str(out), "--quiet"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"quadfleet: --out {out}: ") and "not a directory" in line, line
    assert ".tmp" not in line and "manifest" not in line


# -- item 4: each failed input is said once -------------------------------------------------------------------

@pytest.mark.parametrize("quiet", [False, True])
def test_each_failed_input_is_reported_once(tmp_path, capsys, quiet):
    good = build_sample(tmp_path / "good.warc.gz")
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(b"this is not an archive\n" * 10)
    missing = tmp_path / "missing.warc.gz"
    out = tmp_path / "out"
    rc = main(["extract", str(good), str(bad), str(missing), "--out", str(out), "--processes", "2",
               *(["--quiet"] if quiet else [])])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.count(f"{bad}:") == 1 and err.count(f"{missing}:") == 1, err
    assert f"failed {bad}: not a WARC/ARC archive" in err and f"failed {missing}: no such file" in err
    last = err.strip().splitlines()[-1]
    assert last == (f"1 committed, 0 already committed, 2 failed (named above; why each failed: {out}/errors/); "
                    f"outputs in {out}"), last


# -- item 5: --profile, --region, --endpoint-url -------------------------------------------------------------

def clean_env(tmp_path: Path, **extra: str) -> dict:
    """No AWS setting of the machine running the tests; fake credentials; empty AWS files."""
    env = {k: v for k, v in os.environ.items()
           if not k.upper().startswith(("AWS_", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"))}
    empty = tmp_path / "aws-empty"
    empty.write_text("")
    env.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1",
               AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=str(empty), AWS_SHARED_CREDENTIALS_FILE=str(empty),
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.update(extra)
    return env


def aws_client(service: str, endpoint: str, region: str = "us-east-1"):
    return boto3.client(service, endpoint_url=endpoint, region_name=region, aws_access_key_id="testing",
                        aws_secret_access_key="testing")


def test_endpoint_url_option_reaches_every_worker_process(tmp_path, moto_endpoint):
    """`--endpoint-url` with AWS_ENDPOINT_URL unset: the queue, and an extract to S3 with 2 processes (spawned:
    they get the option through the environment, as the aws CLI's settings reach child processes)."""
    env = clean_env(tmp_path)
    made = run_cli(["queue", "create", "cli16-endpoint", "--endpoint-url", moto_endpoint], env)
    assert made.returncode == 0 and made.stdout.strip().endswith("/cli16-endpoint"), made.stderr
    s3 = aws_client("s3", moto_endpoint)
    s3.create_bucket(Bucket="cli16")
    inputs = [build_sample(tmp_path / "a.warc.gz"), build_sample(tmp_path / "b.warc.gz")]
    res = run_cli(["extract", *map(str, inputs), "--out", "s3://cli16/run", "--processes", "2", "--quiet",
                   "--endpoint-url", moto_endpoint], env)
    assert res.returncode == 0, res.stderr
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket="cli16", Prefix="run/done/")["Contents"]}
    assert keys == {f"run/done/{spec(str(p)).id}" for p in inputs}


def queue_with_dead_letters(endpoint: str, name: str, region: str = "us-east-1", dead: int = 0) -> str:
    """A work queue NAME with its dead-letter queue holding ``dead`` messages; the work queue's URL."""
    sqs = aws_client("sqs", endpoint, region)
    dlq = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    url = sqs.create_queue(QueueName=name, Attributes={
        "RedrivePolicy": f'{{"deadLetterTargetArn": "{arn}", "maxReceiveCount": "2"}}'})["QueueUrl"]
    for _ in range(dead):
        sqs.send_message(QueueUrl=dlq, MessageBody="{}")
    return url


def test_the_option_beats_the_environment(tmp_path, moto_endpoint):
    nothing = "http://127.0.0.1:9"  # nothing listens
    url = queue_with_dead_letters(moto_endpoint, "cli16-env")
    env = clean_env(tmp_path, AWS_ENDPOINT_URL=nothing, AWS_ENDPOINT_URL_SQS=nothing)
    res = run_cli(["redrive", "--queue-url", url, "--endpoint-url", moto_endpoint], env)
    assert res.returncode == 0 and "moved 0 messages from the dead-letter queue" in res.stderr, res.stderr
    # the region: a queue made in eu-west-1 is found with --region eu-west-1 over AWS_REGION=us-east-1
    work = queue_with_dead_letters(moto_endpoint, "cli16-eu", "eu-west-1", dead=1)
    env = clean_env(tmp_path, AWS_ENDPOINT_URL=moto_endpoint, AWS_REGION="us-east-1")
    res = run_cli(["redrive", "--queue-url", work, "--region", "eu-west-1"], env)
    assert res.returncode == 0 and "moved 1 message from the dead-letter queue" in res.stderr, res.stderr
    res = run_cli(["redrive", "--queue-url", work], env)
    assert res.returncode != 0, "without --region the queue is looked for in us-east-1, where it is not"


def test_profile_option_reads_a_profile_over_aws_profile(tmp_path, moto_endpoint):
    """--profile: the profile's credentials, region and endpoint_url from temporary AWS files; it beats
    AWS_PROFILE (which names a profile that does not exist), and --endpoint-url beats the profile's."""
    work = queue_with_dead_letters(moto_endpoint, "cli16-p", "eu-west-1")
    config = tmp_path / "config"
    config.write_text(f"[profile crawl]\nregion = eu-west-1\nendpoint_url = {moto_endpoint}\n\n"
                      "[profile elsewhere]\nregion = eu-west-1\nendpoint_url = http://127.0.0.1:9\n")
    credentials = tmp_path / "credentials"
    credentials.write_text("[crawl]\naws_access_key_id = fromprofile\naws_secret_access_key = fromprofile\n\n"
                           "[elsewhere]\naws_access_key_id = x\naws_secret_access_key = x\n")
    env = clean_env(tmp_path, AWS_CONFIG_FILE=str(config), AWS_SHARED_CREDENTIALS_FILE=str(credentials),
                    AWS_PROFILE="no-such-profile")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"):
        env.pop(name)
    res = run_cli(["redrive", "--queue-url", work, "--profile", "crawl"], env)
    assert res.returncode == 0 and "moved 0 messages" in res.stderr, res.stderr
    res = run_cli(["redrive", "--queue-url", work, "--profile", "elsewhere", "--endpoint-url", moto_endpoint], env)
    assert res.returncode == 0 and "moved 0 messages" in res.stderr, res.stderr
    res = run_cli(["redrive", "--queue-url", work], env)  # AWS_PROFILE alone: a profile that does not exist
    assert res.returncode == 2 and "no-such-profile" in one_line(res.stderr), res.stderr


def test_main_leaves_the_environment_as_it_found_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9")
    before = dict(os.environ)
    (tmp_path / "afile").write_text("")
    assert main(["extract", "x.warc.gz", "--out", str(tmp_path / "afile"), "--profile", "p", "--region", "eu-west-1",
                 "--endpoint-url", "http://127.0.0.1:1"]) == 2
    assert dict(os.environ) == before


def test_every_command_that_talks_to_aws_has_the_aws_options():
    aws_commands = {("extract",), ("enqueue",), ("work",), ("status",), ("redrive",), ("queue", "create"),
                    ("stats",), ("compare",), ("subsets",), ("tables",), ("fleet", "up"), ("fleet", "scale"),
                    ("fleet", "status"), ("fleet", "down")}
    for path, parser in parsers(build_parser()):
        options = {o for a in parser._actions for o in a.option_strings}
        has = {"--profile", "--region", "--endpoint-url"} <= options
        assert has == (path in aws_commands), path


# -- item 6: an archive given to `page`; readable bytes; plurals ------------------------------------------------

def test_page_given_an_archive_says_to_use_extract(tmp_path, capsys):
    archive = build_sample(tmp_path / "s.warc.gz")
    disguised = tmp_path / "page.html"
    disguised.write_bytes(archive.read_bytes())
    for path in (archive, disguised):
        assert main(["page", str(path)]) == 2
        line = one_line(capsys.readouterr().err)
        assert line.startswith(f"quadfleet: page: {path} is a WARC/ARC archive") and "quadfleet extract" in line


def test_not_an_archive_shows_its_first_bytes_readably(tmp_path, capsys):
    bad = tmp_path / "MANIFEST.warc.gz"
    bad.write_bytes("# warc-commoncrawl — real crawl files\n".encode() + b"\xff\xfe more\n")
    main(["extract", str(bad), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert "it starts with '# warc-commoncrawl — real crawl files', not 'WARC/'" in err, err
    assert "\ufffd" not in err
    latin = tmp_path / "latin.warc"
    latin.write_bytes(b"caf\xe9 \x01 au lait\n")
    main(["extract", str(latin), "--out", str(tmp_path / "out"), "--quiet"])
    assert "it starts with 'caf\\xe9 \\x01 au lait'" in capsys.readouterr().err


def test_counts_read_as_english(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["sample", "--out", str(out), "--quiet"]) == 0
    first = capsys.readouterr().out
    assert first.startswith("1 archive, ") and "archive(s)" not in first, first
    assert main(["sample", "--out", str(out), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "1 of the archives was committed by an earlier run" in captured.out, captured.out
    assert "skipping 1 input already committed" in captured.err, captured.err
    assert main(["stats", str(out), "--quiet", "--processes", "1"]) == 0
    assert capsys.readouterr().out.startswith("1 archive, ")
    report = (out / "report" / "index.md").read_text()
    assert "2 pages, 1 PLD, " in report and "1 PLDs" not in report, report


# -- item 7: three kinds of "status" -----------------------------------------------------------------------------

def test_the_three_statuses_say_which_is_which():
    ap = build_parser()
    commands = dict(parsers(ap))
    assert "HTTP status filter for index selection" in commands[("extract",)].format_help()
    assert "fleet status" in commands[("status",)].format_help()
    assert "quadfleet status" in commands[("fleet", "status")].format_help()
    top = ap.format_help()
    assert re.search(r"status\s+a fleet run's progress", top), top
    for flag in ("--status", "--http-status"):  # the old name kept
        args = ap.parse_args(["extract", "--index", "i.cdxj", "--out", "o", flag, "2xx"])
        assert args.status == ["2xx"]


# -- issue 41: what a new user still met ------------------------------------------------------------------------

def closed_stdout_run(args: list[str]) -> subprocess.CompletedProcess:
    """The CLI with a stdout whose reader is gone (as `quadfleet ... | head -1` once head has exited)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(CLI + args, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
                              env=dict(os.environ, COLUMNS="80"), check=False)
    finally:
        os.close(write)


@pytest.mark.parametrize("args, status", [(["--version"], 141), (["--help"], 0),
                                          (["page", str(REPO / "quadfleet/sample/event-both.html")], 141)])
def test_a_closed_stdout_ends_the_command_quietly_with_status_141(args, status):
    """As `yes | head -1`: no traceback, no "Exception ignored", status 128 + SIGPIPE (help is argparse's
    own, which ignores a failed write)."""
    res = closed_stdout_run(args)
    assert res.returncode == status and res.stderr == "", (res.returncode, res.stderr)


def test_stats_and_extract_with_a_closed_stdout_finish_their_work_and_say_so_on_stderr(piped_sample, tmp_path):
    """Issue 52: ``quadfleet stats OUT | head -1`` exited 1, without a word and without its ``report:`` line (rich
    ended the process at its first failed write); ``extract ... | head -1`` lost its summary line. With stdout's
    reader gone, each finishes its work, writes its last line on stderr and ends with status 141."""
    import shutil

    _, _, out = piped_sample
    for attempt in range(3):
        shutil.rmtree(out / "report", ignore_errors=True)   # (so that the report found is this attempt's)
        res = closed_stdout_run(["stats", str(out), "--processes", "1", "--quiet"])
        assert res.returncode == 141, (attempt, res.returncode, res.stderr)
        assert res.stderr.startswith(f"report: {out}/report/index.html") and "Traceback" not in res.stderr
        assert (out / "report" / "index.html").is_file() and (out / "report" / "compare.json.gz").is_file()
    archive = next((out / "input").glob("*.warc.gz"))
    res = closed_stdout_run(["extract", str(archive), "--out", str(tmp_path / "x"), "--quiet"])
    assert res.returncode == 141, (res.returncode, res.stderr)
    assert f"1 committed, 0 already committed, 0 failed; outputs in {tmp_path / 'x'}" in res.stderr
    # stats' own status in a shell pipeline (PIPESTATUS: head's is always 0): 0 if it wrote before head left, else 141
    shell = subprocess.run(["bash", "-c", f"{' '.join(CLI)} stats {out} --processes 1 --quiet | head -1; "
                                          "echo status=${PIPESTATUS[0]} >&2"], capture_output=True, text=True,
                           timeout=120)
    assert shell.stdout.strip() and "report:" in shell.stderr, shell.stderr
    assert shell.stderr.strip().splitlines()[-1] in ("status=0", "status=141"), shell.stderr


def test_a_mistyped_option_shows_the_usage_of_its_command(capsys):
    for argv, usage, wrong in ((["extract", "x.warc.gz", "--out", "o", "--outt", "y"], "quadfleet extract", "--outt y"),
                               (["queue", "create", "q", "--no-such"], "quadfleet queue create", "--no-such"),
                               (["fleet", "down", "--stack", "s", "--forse"], "quadfleet fleet down", "--forse")):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        err = capsys.readouterr().err
        assert exc.value.code == 2 and err.startswith(f"usage: {usage} "), err
        assert err.strip().endswith(f"{usage}: error: unrecognized arguments: {wrong}"), err


def test_a_binary_config_is_one_line_saying_it_is_not_utf8_toml(tmp_path, capsys):
    cfg = tmp_path / "config.toml.gz"
    cfg.write_bytes(b"\x1f\x8b\x08\x00\xff\xfe binary")
    assert main(["page", str(REPO / "quadfleet/sample/no-data.html"), "--config", str(cfg)]) == 2
    line = one_line(capsys.readouterr().err)
    assert line == f"quadfleet: {cfg}: not a TOML file: not UTF-8 text (byte 1 is 0x8b)", line


def test_extract_given_an_html_page_points_to_page(tmp_path, capsys):
    page = tmp_path / "product.html"
    page.write_text("<!doctype html><html><body itemscope></body></html>")
    out = tmp_path / "out"
    assert main(["extract", str(page), "--out", str(out), "--quiet"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line == (f"quadfleet: extract: {page} is an HTML page, not a WARC/ARC archive: print its N-Quads "
                    f"with `quadfleet page {page}`"), line
    assert not out.exists()
    # among archives (a glob taking in a page): that input fails, pointing to `page`, the others go on
    good = build_sample(tmp_path / "good.warc.gz")
    assert main(["extract", str(good), str(page), "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"failed {page}: an HTML page, not a WARC/ARC archive: print its N-Quads with `quadfleet page " in err


def test_page_reads_standard_input_with_base(tmp_path):
    body = (REPO / "quadfleet/sample/product-microdata.html").read_bytes()
    res = subprocess.run(CLI + ["page", "-", "--base", "https://shop.example/p/1"], input=body,
                         capture_output=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert b"<https://shop.example/p/1> .\n" in res.stdout and b"schema.org/Product" in res.stdout
    res = subprocess.run(CLI + ["page", "-"], input=body, capture_output=True, timeout=120, check=False)
    assert res.returncode == 2
    assert one_line(res.stderr.decode()) == ("quadfleet: page: -: standard input has no URL: give the page's "
                                             "with --base URL")


def test_a_base_that_is_no_absolute_url_is_refused_naming_base(capsys):
    """Issue 52: ``--base shop.example/p/1`` printed nothing and exited 0, with ``page-url-not-absolute: 1`` on
    stderr (the API refuses the same URL with a ValueError): now one line naming --base, status 2."""
    page = str(REPO / "quadfleet/sample/product-microdata.html")
    for base in ("shop.example/p/1", "/p/1", ""):
        line = one_line_error(capsys, ["page", page, "--base", base])
        assert line.startswith(f"quadfleet: page: --base {base!r} is not an absolute URL"), line
    assert "https://shop.example/p/1" in one_line_error(capsys, ["page", page, "--base", "shop.example/p/1"])


def test_a_url_that_cannot_be_fetched_is_named_once(tmp_path, capsys):
    url = "https://127.0.0.1:9/crawl.warc.gz"  # nothing listens there
    assert main(["extract", url, "--out", str(tmp_path / "out"), "--quiet"]) == 1
    failed = [line for line in capsys.readouterr().err.splitlines() if line.startswith("failed ")]
    assert len(failed) == 1 and failed[0].count(url) == 1 and "cannot fetch" in failed[0], failed


def test_an_input_that_fails_before_any_read_makes_no_out(tmp_path, capsys):
    out = tmp_path / "out"
    missing = tmp_path / "missing.warc.gz"
    assert main(["extract", str(missing), str(tmp_path / "none-*.warc.gz"), "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"failed {missing}: no such file" in err
    assert err.strip().splitlines()[-1] == (f"0 committed, 0 already committed, 2 failed (named above); "
                                            f"nothing written: {out} not made"), err
    assert not out.exists()


def test_runs_leave_no_empty_scratch_folder_in_out_or_dest(tmp_path):
    out = tmp_path / "out"
    assert main(["sample", "--out", str(out), "--quiet"]) == 0
    assert not (out / ".tmp").exists()
    assert main(["subsets", str(out), "--quiet", "--processes", "1"]) == 0
    assert main(["tables", str(out), "--quiet", "--processes", "1"]) == 0
    for dest in ("subsets-merged", "tables-merged"):
        assert (out / dest / "summary.json").exists() and not (out / dest / ".tmp").exists(), dest
    assert not (out / ".tmp").exists()


def wat_and_wet() -> list[Path]:
    folder = corpus_path("warc-commoncrawl")
    return [folder / "whirlwind.warc.wat.gz", folder / "whirlwind.warc.wet.gz"]


def test_a_wat_or_wet_file_is_committed_with_a_hint_that_it_holds_no_html(tmp_path, capsys):
    wat, wet = wat_and_wet()
    good = build_sample(tmp_path / "good.warc.gz")
    out = tmp_path / "out"
    assert main(["extract", str(good), str(wat), str(wet), "--out", str(out), "--quiet", "--processes", "1"]) == 0
    err = capsys.readouterr().err
    assert (f"{wat}: 2 records, no HTML page (warcinfo 1, metadata 1): a WAT file holds metadata records, "
            "not the pages: extract the crawl's WARC files") in err, err
    assert (f"{wet}: 2 records, no HTML page (warcinfo 1, conversion 1): a WET file holds the pages' plain text, "
            "not their HTML: extract the crawl's WARC files") in err, err
    assert f"{good}:" not in err
    # (issue 52: they were counted as committed, with nothing in them; they are kept done, so a rerun skips them)
    assert err.strip().splitlines()[-1].startswith("1 committed, 2 skipped: no HTML page, 0 already committed, "
                                                   "0 failed; "), err
    assert len(list((out / "done").iterdir())) == 3
    capsys.readouterr()
    alone = tmp_path / "alone"
    assert main(["extract", str(wat), "--out", str(alone), "--quiet", "--processes", "1"]) == 0
    out_text = capsys.readouterr()
    assert "| any format" not in out_text.out, "no table of zeros for an input without an HTML page"
    assert out_text.err.strip().splitlines()[-1].startswith("0 committed, 1 skipped: no HTML page, 0 already "
                                                            "committed, 0 failed; ")


def test_a_scheme_quadfleet_does_not_read_is_named_and_an_upper_case_one_is_said_so(tmp_path, capsys):
    """``ftp://`` said "no such file" before issue 52; ``HTTPS://`` (a scheme quadfleet reads, in upper case) said
    that https:// is not a scheme quadfleet reads."""
    out = tmp_path / "out"
    assert main(["extract", "ftp://x/y.warc.gz", "HTTPS://x/y.warc.gz", "--out", str(out), "--quiet"]) == 1
    failed = [line for line in capsys.readouterr().err.splitlines() if line.startswith("failed ")]
    assert failed == ["failed ftp://x/y.warc.gz: ftp:// is not a scheme quadfleet reads (give a path, https://, "
                      "http:// or s3://)",
                      "failed HTTPS://x/y.warc.gz: write the scheme HTTPS:// in lower case (https://): quadfleet "
                      "reads it so"], failed
    assert not out.exists()
