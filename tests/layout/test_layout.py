"""The house rules, read from the source: no import cycle (function-level imports included), nothing private
imported across modules, rooms of at most 15 modules that say what they hold, data flowing one way, and the
native code loaded in one place. Imports are read from ``import`` statements and from ``import_module``,
``importlib.import_module`` and ``__import__`` calls, whose module must be written out as a string."""
from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
ROOTS = {"quadfleet": "quadfleet", "quadfleet.worker": "worker", "quadfleet.coordinator": "coordinator",
         "quadfleet.config": "config", "quadfleet.infra": "infra"}
# The worker's rooms in the order data flows through them: a room may import only the rooms before it. The native
# loader comes right after rdf (its nquads check hands the C module rdf's terms), below every room that runs native
# code.
WORKER_ROOMS = ["errors", "aws", "allocator", "rdf", "native", "html", "archive", "extractors", "config", "quality",
                "output", "pipeline", "queue"]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _setup_extensions() -> list:
    """setup.py's extensions, read by running the file as a module (it calls setup() only as __main__)."""
    spec = importlib.util.spec_from_file_location("quadfleet_setup", REPO / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.EXT_MODULES


EXT_MODULES = _setup_extensions()
# The C modules, as setup.py builds them: their last name (_scan, _blocks, ...).
NATIVE_MODULES = {m.name.rsplit(".", 1)[-1] for m in EXT_MODULES}
IMPORT_CALLS = {"import_module", "__import__"}  # (importlib.import_module too: the attribute's name is read)


def _modules() -> dict[str, Path]:
    mods = {}
    for root, folder in ROOTS.items():
        for path in (REPO / folder).rglob("*.py"):
            parts = list(path.relative_to(REPO / folder).with_suffix("").parts)
            if folder == "quadfleet" and parts and parts[0] in ("worker", "coordinator", "config", "infra"):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join([root] + parts)] = path
    return mods


MODULES = _modules()


def _import_call(node: ast.AST) -> ast.Call | None:
    """The node if it is a call of ``import_module``, ``importlib.import_module`` or ``__import__``."""
    if isinstance(node, ast.Call):
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if called in IMPORT_CALLS:
            return node
    return None


def _imports(name: str) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, names) of every ``from … import`` and ``import`` in a module, at any depth, and of
    every ``import_module("…")`` (a relative name resolved against the module's package, as ``__package__``
    gives it) and ``__import__("…")``."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        call = _import_call(node)
        if call is not None and call.args and isinstance(call.args[0], ast.Constant):
            module = call.args[0].value
            if isinstance(module, str) and module.startswith("."):
                level = len(module) - len(module.lstrip("."))
                base = package.split(".")[:len(package.split(".")) - (level - 1)]
                module = ".".join(base + [module.lstrip(".")])
            found.append((node.lineno, str(module), []))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, a.name, []) for a in node.names)
    return found


def _edges() -> dict[str, set[str]]:
    """Module → the project modules it imports (``from pkg import mod`` counts as importing ``pkg.mod``)."""
    edges = {}
    for name in MODULES:
        targets = set()
        for _, module, names in _imports(name):
            subs = [f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES]
            if subs:
                targets.update(subs)
            if module in MODULES and len(subs) < len(names or [None]):
                targets.add(module)
        targets.discard(name)
        edges[name] = targets
    return edges


EDGES = _edges()


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in EDGES:
        if start in index:
            continue
        work = [(start, iter(sorted(EDGES[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(EDGES[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_checker_sees_the_project():
    assert len(MODULES) > 100 and "quadfleet.worker.pipeline.process" in MODULES
    assert "quadfleet.worker.html.page" in EDGES["quadfleet.worker.pipeline.pagequads"]


def test_no_import_cycle():
    assert _cycles() == []


def test_a_cycle_would_be_found(monkeypatch):
    monkeypatch.setitem(EDGES, "quadfleet.worker.html.page",
                        EDGES["quadfleet.worker.html.page"] | {"quadfleet.worker.pipeline.pagequads"})
    assert any({"quadfleet.worker.html.page", "quadfleet.worker.pipeline.pagequads"} <= set(c) for c in _cycles())


def test_nothing_private_is_imported_from_another_module():
    private = []
    for name in MODULES:
        for line, module, names in _imports(name):
            if not module.startswith("quadfleet") or module.rsplit(".", 1)[-1] in NATIVE_MODULES:
                continue  # (the C modules: only the native loader imports them, a test below holds it)
            for n in names:
                if n.startswith("_") and not n.startswith("__"):
                    private.append(f"{MODULES[name].relative_to(REPO)}:{line}: {module}.{n}")
            if any(part.startswith("_") and not part.startswith("__") for part in module.split(".")):
                private.append(f"{MODULES[name].relative_to(REPO)}:{line}: {module}")
    assert private == []


def test_no_folder_holds_more_than_15_modules_and_each_says_what_it_holds():
    folders: dict[Path, int] = {}
    for path in MODULES.values():
        if path.name != "__init__.py":
            folders[path.parent] = folders.get(path.parent, 0) + 1
    for folder in ("tests", "bench"):  # the tests and benchmarks too
        for path in (REPO / folder).rglob("*.py"):
            folders[path.parent] = folders.get(path.parent, 0) + 1
    assert {str(f.relative_to(REPO)): n for f, n in folders.items() if n > 15} == {}
    for name, path in MODULES.items():
        if path.name == "__init__.py":
            assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), f"{name}: no docstring"


def _room(name: str) -> str | None:
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "worker" else None


def test_data_flows_one_way():
    """coordinator may import worker, never the reverse; neither imports the command line or the public API;
    inside the worker, a room imports only the rooms before it in the data flow."""
    wrong = []
    for name, targets in EDGES.items():
        for target in targets:
            if name.startswith("quadfleet.worker") and target.startswith(("quadfleet.coordinator", "quadfleet.cli")):
                wrong.append(f"{name} -> {target}")
            if name.startswith("quadfleet.coordinator") and target.startswith("quadfleet.cli"):
                wrong.append(f"{name} -> {target}")
            # the public API (quadfleet.api) and its integrations sit on top: nothing inside imports them
            if (name.startswith(("quadfleet.worker", "quadfleet.coordinator"))
                    and target.startswith(("quadfleet.api", "quadfleet.integrations"))):
                wrong.append(f"{name} -> {target}")
            a, b = _room(name), _room(target)
            if a in WORKER_ROOMS and b in WORKER_ROOMS and WORKER_ROOMS.index(b) > WORKER_ROOMS.index(a):
                wrong.append(f"{name} -> {target}")
    assert wrong == []


def test_every_import_call_names_its_module():
    """An ``import_module``/``__import__`` of a name made at run time would hide an import from these rules."""
    unread = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            call = _import_call(node)
            if call is not None and not (call.args and isinstance(call.args[0], ast.Constant)
                                         and isinstance(call.args[0].value, str)):
                unread.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert unread == []


def test_string_imports_are_read():
    found = {module for _, module, _ in _imports("quadfleet.worker.native")}
    assert {"quadfleet.worker.html._scan", "quadfleet.worker.archive._inflate", "fastwarc.warc"} <= found


def _native_loaders() -> set[str]:
    loaders = set()
    for name in MODULES:
        for _, module, names in _imports(name):
            last = module.rsplit(".", 1)[-1]
            if last in NATIVE_MODULES or NATIVE_MODULES & set(names) or module.split(".")[0] == "fastwarc":
                loaders.add(name)
    return loaders


def test_only_the_native_loader_imports_native_code():
    # the FastWARC reader is imported only where the loader found FastWARC (worker/archive/records.py)
    assert _native_loaders() == {"quadfleet.worker.native", "quadfleet.worker.archive.fastwarc_reader"}


def test_a_string_import_of_native_code_elsewhere_would_be_found(monkeypatch):
    real = _imports

    def more(name):
        extra = [(1, "quadfleet.worker.html._blocks", [])] if name == "quadfleet.worker.html.page" else []
        return real(name) + extra

    monkeypatch.setitem(globals(), "_imports", more)
    assert "quadfleet.worker.html.page" in _native_loaders()


def test_the_loader_loads_every_c_module_setup_builds():
    """setup.py builds every C file under worker/ as an optional extension, and the loader imports each;
    pyproject.toml leaves them to it (setuptools calls its ext-modules table experimental, at every install)."""
    sources = {src for m in EXT_MODULES for src in m.sources}
    assert sources == {str(p.relative_to(REPO)) for p in (REPO / "worker").rglob("*.c")}
    assert all(m.optional for m in EXT_MODULES)  # a machine without a compiler installs the twins
    assert "ext-modules" not in PYPROJECT["tool"]["setuptools"]
    loaded = {module.rsplit(".", 1)[-1] for _, module, _ in _imports("quadfleet.worker.native")}
    assert NATIVE_MODULES <= loaded, NATIVE_MODULES - loaded


@pytest.mark.parametrize("room", WORKER_ROOMS)
def test_each_worker_room_exists(room):
    assert any(_room(name) == room for name in MODULES), room


def test_pyproject_installs_every_package():
    """A folder with an ``__init__.py`` missing from pyproject's package list is left out of a wheel: an installed
    quadfleet (the fleet's, bench_crawl's baseline build) then fails at its first import of it, while an editable
    install, which the tests run, works. (worker/quality was missing.)"""
    setup = PYPROJECT["tool"]["setuptools"]
    found = set()
    for name, folder in setup["package-dir"].items():
        for init in (REPO / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(REPO / folder).parts
            if "__pycache__" not in parts:
                found.add(".".join((name, *parts)))
    assert sorted(found - set(setup["packages"])) == []
