"""Every shell and Python example of README.md and docs/**/*.md runs, so the docs cannot drift from the code.

The conventions (docs/contributing-docs.md says the same to writers):

- A fenced block labelled ``sh``, ``bash`` or ``shell`` runs with ``bash -euo pipefail``; one labelled
  ``python`` or ``py`` runs with the tests' Python (``sys.executable -c``). Any other label (``console``,
  ``text``, ``toml``, ``json``, ``sql``, ``yaml``) and an unlabelled block is shown, not run.
- HTML comments on the lines just before a fence (blank lines allowed between) steer that block:
  ``<!-- not run: REASON -->`` skips it, and the reason is mandatory (a bare ``<!-- not run -->`` fails);
  ``<!-- expect exit N -->`` expects status N (an example of an error); ``<!-- check: TEXT -->`` requires TEXT
  in its stdout (repeatable); ``<!-- timeout: SECONDS -->`` replaces the 120 s limit.
- A block passes if it exits 0 (or N) within its time limit. The blocks of one page run in order in one fresh
  working directory, so a block can use what an earlier one made; every block runs even after a failure.
- The working directory is a newcomer's checkout after the README's first command: ``quadfleet/`` (a link to
  the repository's, so ``quadfleet/sample/*.html`` is there), ``config/quadfleet.toml``, and ``sample-out/`` from
  ``quadfleet sample --out sample-out --quiet`` (its archive: ``sample-out/input/quadfleet-sample.warc.gz``).
  Nothing else: an example runs, as written, in a fresh clone after the README's first command (issue 52: the
  runner made a ``crawl/`` folder of corpus archives, which no checkout has, and the examples used it).
- ``quadfleet`` and ``python3`` on PATH are the tests' (``sys.executable``'s folder first). No AWS settings
  reach a block: every ``AWS_*`` variable is dropped, the config and credentials files are empty and the
  instance metadata is off, so a block that would call AWS fails at once instead of waiting.

One test per page (its id is the page's path) runs its blocks; a failure names the page, the block's line and
first line, its status and the end of its stderr. A second test per page checks the comments and, when some
blocks are not run, is skipped with their lines and reasons, so ``pytest -ra`` lists every block not run.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
LANGUAGES = {"sh": "bash", "bash": "bash", "shell": "bash", "python": "python", "py": "python"}
TIMEOUT = 120.0

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*?)\s*$")
_COMMENT = re.compile(r"^\s*<!--(?P<text>.*?)-->\s*$")
_DIRECTIVE_WORDS = re.compile(r"^(not[\s-]*run|expect|check|timeout)\b", re.I)


@dataclass
class Block:
    """One fenced block of a page: where it starts (the fence's line, from 1), its label and code, and what
    the comments above it ask."""
    page: str
    line: int
    language: str
    code: str
    not_run: str | None = None
    expect_exit: int = 0
    checks: list[str] = field(default_factory=list)
    timeout: float = TIMEOUT

    @property
    def runner(self) -> str | None:
        """The interpreter of a block that runs ("bash" or "python"); None for a block only shown."""
        return LANGUAGES.get(self.language)

    @property
    def first_line(self) -> str:
        return next((line.strip() for line in self.code.splitlines() if line.strip()), "")

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Outcome:
    """What running (or not running) one block gave: "passed", "failed" or "not run", and why."""
    block: Block | None
    status: str
    detail: str = ""
    seconds: float = 0.0

    def describe(self) -> str:
        if self.block is None:
            return self.detail
        return f"{self.block.where}: ```{self.block.language} {self.status}: {self.block.first_line}\n{self.detail}"


def _directive(text: str, block: Block, problems: list[str], where: str) -> None:
    text = text.strip()
    if not _DIRECTIVE_WORDS.match(text):
        return  # another comment (a marker, a note to writers)
    if m := re.fullmatch(r"not[\s-]*run\s*(?::\s*(?P<reason>.*))?", text, re.I | re.S):
        reason = (m.group("reason") or "").strip()
        if not reason:
            problems.append(f"{where}: <!-- not run --> needs a reason, as <!-- not run: needs AWS credentials -->")
        block.not_run = reason or "no reason given"
    elif m := re.fullmatch(r"expect\s+exit\s*:?\s*(\d+)", text, re.I):
        block.expect_exit = int(m.group(1))
    elif m := re.fullmatch(r"check\s*:\s*(.+)", text, re.I | re.S):
        block.checks.append(m.group(1).strip())
    elif m := re.fullmatch(r"timeout\s*:?\s*(\d+(?:\.\d+)?)\s*s?", text, re.I):
        block.timeout = float(m.group(1))
    else:
        problems.append(f"{where}: cannot read <!-- {text} --> (known: not run: REASON, expect exit N, "
                        "check: TEXT, timeout: SECONDS)")


def parse_page(text: str, name: str) -> tuple[list[Block], list[str]]:
    """The page's fenced blocks, each with the comments just above its fence, and the problems found in those
    comments (a ``not run`` without a reason, a comment that looks like a directive but is not one)."""
    lines = text.splitlines()
    blocks, problems, i = [], [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group("indent")), m.group("fence"), m.group("info")
        language = (info.split()[0].lstrip(".{").rstrip("}") if info.split() else "").lower()
        block = Block(name, i + 1, language, "")
        j = i - 1  # the comments above the fence, blank lines allowed between
        while j >= 0 and (not lines[j].strip() or _COMMENT.match(lines[j])):
            if lines[j].strip():
                _directive(_COMMENT.match(lines[j]).group("text"), block, problems, f"{name}:{j + 1}")
            j -= 1
        body, i = [], i + 1
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                      and not lines[i].strip().strip(fence[0])):
            line = lines[i]
            body.append(line[min(indent, len(line) - len(line.lstrip())):])
            i += 1
        block.code = "\n".join(body) + "\n"
        blocks.append(block)
        i += 1
    return blocks, problems


def example_env() -> dict[str, str]:
    """The environment blocks run in: the tests' ``quadfleet`` and Python first on PATH, no AWS settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
               AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=os.devnull,
               AWS_SHARED_CREDENTIALS_FILE=os.devnull, COLUMNS="100", PYTHONDONTWRITEBYTECODE="1")
    return env


def _run(argv: list[str], cwd: Path, env: dict, timeout: float) -> tuple[int | None, str, str]:
    """Run in a process group of its own; past the time limit (status None), and after the end, what is left
    of the group (a server a block started in the background) is killed."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        status = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        status = None
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    return status, out.decode(errors="replace"), err.decode(errors="replace")


def _tail(text: str, lines: int = 15) -> str:
    kept = text.rstrip().splitlines()[-lines:]
    return "\n".join("    " + line for line in kept) if kept else "    (nothing)"


def _page_lines(err: str, block: Block) -> str:
    """Python's and bash's line numbers in the block (``File "<string>", line 3``, ``bash: line 3:``) as the
    page's."""
    err = re.sub(r'File "<string>", line (\d+)',
                 lambda m: f'File "{block.page}", line {block.line + int(m.group(1))}', err)
    return re.sub(r"^bash: line (\d+):", lambda m: f"bash: {block.page}, line {block.line + int(m.group(1))}:", err,
                  flags=re.M)


def run_block(block: Block, cwd: Path, env: dict) -> Outcome:
    """Run one block in ``cwd``; passed if its status is the expected one and its stdout holds every check."""
    argv = (["bash", "-euo", "pipefail", "-c", block.code] if block.runner == "bash"
            else [sys.executable, "-c", block.code])
    start = time.monotonic()
    status, out, err = _run(argv, cwd, env, block.timeout)
    seconds = time.monotonic() - start
    err = _page_lines(err, block)
    if status is None:
        return Outcome(block, "failed", f"  killed after {block.timeout:g} s\n  stderr:\n{_tail(err)}", seconds)
    if status != block.expect_exit:
        return Outcome(block, "failed", f"  exit {status} (expected {block.expect_exit}) after {seconds:.1f} s\n"
                                        f"  stderr:\n{_tail(err)}\n  stdout:\n{_tail(out, 5)}", seconds)
    missing = [c for c in block.checks if c not in out]
    if missing:
        return Outcome(block, "failed", f"  stdout lacks {missing!r}\n  stdout:\n{_tail(out)}", seconds)
    return Outcome(block, "passed", f"  {seconds:.1f} s", seconds)


def run_page(path: Path, cwd: Path, env: dict | None = None, name: str | None = None) -> list[Outcome]:
    """Run the page's blocks in order in ``cwd`` (which the caller prepares): one outcome for each problem of
    its comments, then one per block that runs or is marked not run."""
    name = name or path.name
    blocks, problems = parse_page(path.read_text(encoding="utf-8"), name)
    outcomes = [Outcome(None, "failed", problem) for problem in problems]
    env = example_env() if env is None else env
    for block in blocks:
        if block.runner is None:
            continue
        if block.not_run is not None:
            outcomes.append(Outcome(block, "not run", f"  {block.not_run}"))
        else:
            outcomes.append(run_block(block, cwd, env))
    return outcomes


# -- the working directory ---------------------------------------------------------------------------------

def make_checkout(base: Path) -> Path:
    """In the empty folder ``base``: a newcomer's checkout after the README's first command (see above)."""
    bindir = Path(sys.executable).parent
    if not (bindir / "quadfleet").exists():
        pytest.fail(f"no quadfleet command beside {sys.executable}: pip install -e . first")
    (base / "quadfleet").symlink_to(REPO / "quadfleet", target_is_directory=True)
    (base / "config").mkdir()
    shutil.copyfile(REPO / "config" / "quadfleet.toml", base / "config" / "quadfleet.toml")
    status, _, err = _run(["quadfleet", "sample", "--out", "sample-out", "--quiet"], base, example_env(), TIMEOUT)
    assert status == 0, f"quadfleet sample failed:\n{_tail(err)}"
    return base


@pytest.fixture(scope="session")
def checkout(tmp_path_factory) -> Path:
    """The checkout, made once for the session; each page gets a copy (:func:`prepare`)."""
    return make_checkout(tmp_path_factory.mktemp("docs-checkout"))


def prepare(checkout: Path, where: Path) -> Path:
    """A fresh copy of the checkout (the quadfleet/ link stays a link)."""
    shutil.copytree(checkout, where, symlinks=True)
    return where


# -- the tests ---------------------------------------------------------------------------------------------

def _page_id(path: Path) -> str:
    return str(path.relative_to(REPO))


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_the_examples_run(page, request, tmp_path):
    blocks, problems = parse_page(page.read_text(encoding="utf-8"), _page_id(page))
    if not problems and not any(b.runner and b.not_run is None for b in blocks):
        return  # nothing to run: no working directory needed
    cwd = prepare(request.getfixturevalue("checkout"), tmp_path / "checkout")
    outcomes = run_page(page, cwd, name=_page_id(page))
    for outcome in outcomes:
        print(outcome.describe())
    failed = [o for o in outcomes if o.status == "failed"]
    ran = sum(o.status != "not run" for o in outcomes)
    assert not failed, (f"{len(failed)} of {ran} examples of {_page_id(page)} failed:\n\n"
                        + "\n\n".join(o.describe() for o in failed))


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_the_examples_not_run_say_why(page):
    """Fails on a ``not run`` without a reason (or a comment mistaken for a directive); skipped, listing the
    blocks not run with their reasons, when there are any."""
    blocks, problems = parse_page(page.read_text(encoding="utf-8"), _page_id(page))
    assert not problems, "\n".join(problems)
    not_run = [b for b in blocks if b.runner and b.not_run is not None]
    if not_run:
        pytest.skip(f"{_page_id(page)}: {len(not_run)} example(s) not run: "
                    + "; ".join(f"line {b.line} ({b.not_run})" for b in not_run))


def test_a_broken_example_fails_the_runner(tmp_path):
    """The runner itself: a bad option and a raising block both fail, named by line; the blocks share a
    directory in order; expect exit, check and not run act; a not run without a reason is a failure."""
    page = tmp_path / "page.md"
    page.write_text("""# A page

```sh
echo made > made.txt
```

```sh
quadfleet extract sample-out/input/quadfleet-sample.warc.gz --out out --no-such-option
```

Some text.

```python
raise RuntimeError("this example is broken")
```

<!-- expect exit 3 -->

<!-- check: made -->
```sh
cat made.txt
exit 3
```

<!-- check: not printed -->
```python
print(open("made.txt").read())
```

<!-- not run: needs AWS credentials -->
```sh
aws s3 ls s3://commoncrawl/
```

<!-- not run -->
```bash
true
```

```console
$ this is output, never run
```
""", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    outcomes = run_page(page, work)
    by_line = {o.block.line: o for o in outcomes if o.block}
    assert [o.status for o in outcomes if o.block is None] == ["failed"]
    assert "page.md:35: <!-- not run --> needs a reason" in outcomes[0].detail
    assert by_line[3].status == "passed"
    assert by_line[7].status == "failed" and "exit 2 (expected 0)" in by_line[7].detail
    assert "unrecognized arguments: --no-such-option" in by_line[7].detail
    assert by_line[7].describe().startswith("page.md:7: ```sh failed: quadfleet extract sample-out/input/")
    assert by_line[13].status == "failed" and "RuntimeError: this example is broken" in by_line[13].detail
    assert by_line[13].describe().startswith("page.md:13: ```python failed: raise RuntimeError")
    assert by_line[20].status == "passed"  # exit 3 expected, "made" printed: the first block's file is there
    assert by_line[26].status == "failed" and "lacks ['not printed']" in by_line[26].detail
    assert by_line[31].status == "not run" and "needs AWS credentials" in by_line[31].detail
    assert by_line[36].status == "not run" and 40 not in by_line  # (the console block is shown, not run)
    assert len([o for o in outcomes if o.status == "failed"]) == 4


def test_a_block_over_its_time_limit_is_killed_with_what_it_started(tmp_path):
    page = tmp_path / "slow.md"
    page.write_text("<!-- timeout: 1 -->\n```sh\nsleep 30 & sleep 30\n```\n", encoding="utf-8")
    start = time.monotonic()
    [outcome] = run_page(page, tmp_path)
    assert outcome.status == "failed" and "killed after 1 s" in outcome.detail
    assert time.monotonic() - start < 10


def test_blocks_see_no_aws_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://localhost:1")
    page = tmp_path / "env.md"
    page.write_text("<!-- check: clean -->\n```python\nimport os, shutil, sys\n"
                    "assert not [k for k in os.environ if k.startswith('AWS_') and k not in (\n"
                    "    'AWS_EC2_METADATA_DISABLED', 'AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE')]\n"
                    "assert os.path.dirname(shutil.which('quadfleet')) == os.path.dirname(sys.executable)\n"
                    "print('clean')\n```\n", encoding="utf-8")
    [outcome] = run_page(page, tmp_path)
    assert outcome.status == "passed", outcome.describe()
