"""The house's rules, read from the package itself: layers are its folders, ordered by
``jtop_roof.LAYERS``; every import (lazy ones inside functions too) goes to the same layer or a lower
one; no import cycle; Textual only under ``tui/``; one place builds a ``Runtime``, one turns the
flags into sources, one takes the stop signals; one module touches Textual's privates; no module over
600 lines; a small package top.
Also Python 3.10 compatibility (ruff with target py310)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import REPO

import jtop_roof

PACKAGE = REPO / "jtop_roof"
UI_PACKAGES = ("textual", "textual_plotext", "plotext")
MAX_MODULE_LINES = 600
MAX_TOP_ENTRIES = 14


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Every module of the package that ``path`` imports, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        for target in targets:
            while target not in known and "." in target:
                target = target.rpartition(".")[0]
            if target in known and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports_of(name, path, set(found)) for name, path in found.items()}


def layer_of(module: str) -> int:
    """The layer's rank; the package's ``__init__`` (its version, its layers) sits below all, its
    other top-level modules (``hook``, ``__main__``) above all."""
    parts = module.split(".")
    if len(parts) == 1:
        return -1
    if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()):
        return jtop_roof.LAYERS.index(parts[1])
    return len(jtop_roof.LAYERS)


def test_the_layers_are_the_folders():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert folders == set(jtop_roof.LAYERS)
    top = [p.name for p in PACKAGE.iterdir() if p.name not in ("__pycache__", "py.typed")]
    assert len(top) <= MAX_TOP_ENTRIES, sorted(top)


def test_no_import_reaches_a_higher_layer():
    upward = sorted(f"{name} -> {target}" for name, targets in import_graph().items()
                    for target in targets if layer_of(target) > layer_of(name))
    assert upward == []


def test_no_import_cycle():
    graph = import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert cycles == []


def test_only_the_tui_imports_textual():
    """Textual only in tui/; plotext also in ``plot --term``'s module (inside its draw, not Textual)."""
    offenders = []
    for name, path in modules().items():
        if name.startswith("jtop_roof.tui"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            offenders += [f"{name}: {n}" for n in names if n.split(".")[0] in UI_PACKAGES
                          and (n, name) != ("plotext", "jtop_roof.outputs.plot_term")]
    assert offenders == []


def runtime_builds(package: Path) -> list[str]:
    """Every call of ``Runtime`` in ``package``, as ``module.py:line``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and (
                    isinstance(node.func, ast.Name) and node.func.id == "Runtime"
                    or isinstance(node.func, ast.Attribute) and node.func.attr == "Runtime"):
                found.append(f"{path.relative_to(package).as_posix()}:{node.lineno}")
    return found


def test_a_runtime_is_built_in_one_place():
    """One factory builds every command's runtime, so its lifecycle has one start."""
    builds = runtime_builds(PACKAGE)
    assert len(builds) == 1 and builds[0].startswith("runtime/runtime.py:"), builds


def test_a_second_runtime_build_is_caught(tmp_path: Path):
    """The check above reads calls, not text: a second build anywhere in a copy is found."""
    copy = tmp_path / "jtop_roof"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    serve = copy / "outputs" / "serve.py"
    serve.write_text(serve.read_text(encoding="utf-8")
                     + "\n\ndef again(source, config):\n    return runtime.Runtime(source, config)\n",
                     encoding="utf-8")
    builds = runtime_builds(copy)
    assert len(builds) == len(runtime_builds(PACKAGE)) + 1 == 2, builds
    assert any(build.startswith("outputs/serve.py:") for build in builds), builds


def source_classes(package: Path) -> set[str]:
    """The classes of ``sources/`` that are sources (their names end in ``Source``; ``Source``
    itself is abstract, and the device database has a ``Source`` of its own: a datasheet)."""
    return {node.name for path in (package / "sources").glob("*.py")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.ClassDef) and node.name.endswith("Source")} - {"Source"}


#: What turns the config's (the flags') choice of source into sources (``runtime.session``).
SOURCE_CHOICES = ("make_source", "make_sources", "resolve_source_kind")


def calls_of(package: Path, names: set[str] | tuple[str, ...], *, outside: str) -> list[str]:
    """Every call of a function or class among ``names`` in ``package`` but under ``outside``, as
    ``module.py:line`` (the name as called: ``Runtime(...)`` or ``sources.Runtime(...)``)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package).as_posix()
        if where.startswith(outside):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and (
                    isinstance(node.func, ast.Name) and node.func.id in names
                    or isinstance(node.func, ast.Attribute) and node.func.attr in names):
                found.append(f"{where}:{node.lineno}")
    return found


def test_sources_are_built_in_one_place():
    """A source class is built only by ``runtime/session.py`` (its builders, one per kind), so a new
    source is one line there; the classes build each other only inside ``sources/``."""
    builds = calls_of(PACKAGE, source_classes(PACKAGE), outside="sources/")
    assert builds and {build.partition(":")[0] for build in builds} == {"runtime/session.py"}, builds


def test_the_flags_become_sources_in_one_place():
    """The commands turn the sources' flags into sources only through ``commands/source_flags.py``
    (``sources_of``): the monitor, record, run and serve cannot drift apart again."""
    choices = calls_of(PACKAGE, SOURCE_CHOICES, outside="runtime/session.py")
    modules = {choice.partition(":")[0] for choice in choices}
    assert choices and modules == {"commands/source_flags.py"}, choices


def test_a_second_flags_to_source_route_is_caught(tmp_path: Path):
    """The checks above read calls, not text: a command that builds its own source is found."""
    copy = tmp_path / "jtop_roof"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    serve = copy / "commands" / "serve.py"
    serve.write_text(serve.read_text(encoding="utf-8")
                     + "\n\ndef again(config):\n    from jtop_roof.runtime import session\n"
                     "    kind, _ = session.resolve_source_kind(config, None)\n"
                     "    from jtop_roof.sources.host import HostSource\n"
                     "    return HostSource(1000)\n", encoding="utf-8")
    assert any(c.startswith("commands/serve.py:")
               for c in calls_of(copy, SOURCE_CHOICES, outside="runtime/session.py"))
    assert any(c.startswith("commands/serve.py:")
               for c in calls_of(copy, source_classes(copy), outside="sources/"))


def test_the_stop_signals_and_a_sources_end_are_handled_in_one_place():
    """``record``, ``run --headless`` and ``serve`` end through ``Runtime.run``: only the lifecycle
    takes the stop signals, and a runtime's stream is drained (a failing source said) only by it and
    the monitor's workers, never pumped raw by a consumer."""
    takers = calls_of(PACKAGE, ("take_signals",), outside="runtime/signals.py")
    assert {taker.partition(":")[0] for taker in takers} == {"runtime/lifecycle.py"}, takers
    drains = {call.partition(":")[0] for call in calls_of(PACKAGE, ("drain",), outside="runtime/runtime.py")}
    assert drains == {"runtime/lifecycle.py", "tui/streams.py"}, drains
    pumps = {call.partition(":")[0] for call in calls_of(PACKAGE, ("pump",), outside="analysis/pump.py")}
    assert pumps <= {"runtime/runtime.py", "analysis/pipeline.py", "probe/sampler.py", "tui/app.py"}, pumps


def private_names(package_dir: Path) -> set[str]:
    """Every ``_name`` (not dunder) a package defines: functions, classes, attributes it sets."""
    names: set[str] = set()
    for path in package_dir.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = node.name
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                name = node.attr
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                name = node.id
            else:
                continue
            if name.startswith("_") and not name.startswith("__"):
                names.add(name)
    return names


def private_touches(package: Path, privates: set[str]) -> dict[str, list[str]]:
    """Per module of ``tui/`` (only it imports Textual), each use of a Textual (or Rich) private:
    an import of ``textual._x`` or of ``_y`` from Textual, and ``obj._name`` where Textual defines
    ``_name`` and the module does not (its own ``self._lines`` is not Textual's) and ``obj`` is
    not a module it imports (``os._exit``)."""
    found: dict[str, list[str]] = {}
    for path in sorted((package / "tui").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = private_names_of(tree)
        plain = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names if alias.name.split(".")[0] not in ("textual", "rich")}
        hits = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                hits += [a.name for a in node.names if _private_module(a.name)]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                module = node.module or ""
                if _private_module(module) or module.split(".")[0] in ("textual", "rich") and any(
                        a.name.startswith("_") for a in node.names):
                    hits.append(module)
            elif isinstance(node, ast.Attribute) and node.attr in privates and node.attr not in own \
                    and not (isinstance(node.value, ast.Name) and node.value.id in plain):
                hits.append(f"{node.attr} (line {node.lineno})")
        if hits:
            found[path.relative_to(package).as_posix()] = hits
    return found


def private_names_of(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _private_module(module: str) -> bool:
    parts = module.split(".")
    return parts[0] in ("textual", "rich") and any(p.startswith("_") for p in parts[1:])


def textual_privates() -> set[str]:
    import rich
    import textual

    return private_names(Path(textual.__file__).parent) | private_names(Path(rich.__file__).parent)


def test_one_module_touches_textuals_privates():
    """The fast paint's Textual internals are in tui/fastpaint.py alone, behind its switch to
    Textual's stock paint; every other module uses Textual's public API."""
    touches = private_touches(PACKAGE, textual_privates())
    assert list(touches) == ["tui/fastpaint.py"], touches


def test_a_private_touched_elsewhere_is_caught(tmp_path: Path):
    """The check reads attribute uses and imports: a Textual private used in another module of a
    copy is found, and so is an import from a private Textual module."""
    copy = tmp_path / "jtop_roof"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    rows = copy / "tui" / "widgets" / "rows.py"
    rows.write_text(rows.read_text(encoding="utf-8")
                    + "\n\ndef again(widget):\n    widget._layout_cache.clear()\n", encoding="utf-8")
    header = copy / "tui" / "header.py"
    header.write_text(header.read_text(encoding="utf-8") + "\nfrom textual._loop import loop_last\n",
                      encoding="utf-8")
    touches = private_touches(copy, textual_privates())
    assert sorted(touches) == ["tui/fastpaint.py", "tui/header.py", "tui/widgets/rows.py"], touches
    assert touches["tui/widgets/rows.py"] == [f"_layout_cache (line {len(rows.read_text().splitlines())})"]


def test_importing_everything_but_the_tui_loads_no_textual():
    below = [name for name in modules() if not name.startswith(("jtop_roof.tui", "jtop_roof.commands"))
             and name != "jtop_roof.__main__"]
    code = (
        "import importlib, sys\n"
        f"for name in {below!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {UI_PACKAGES!r})))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_no_module_is_over_600_lines():
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_ruff_py310_target_passes():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (it is in the test extras)")
    result = subprocess.run(
        [ruff, "check", "--target-version", "py310", "jtop_roof", "tests", "benchmarks"],
        cwd=REPO, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
