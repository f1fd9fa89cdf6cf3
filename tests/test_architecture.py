"""The package's architecture holds: its layers (``[tool.importlinter]`` in pyproject.toml) and no
import cycle between its modules.

``lint-imports`` reads every import of the source, those inside functions too, so a lazy import
cannot hide a dependency on a higher layer. Imports under ``if TYPE_CHECKING:`` are annotations
only and do not count.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the package under ``root``, with the repository's contracts."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(REPO / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_every_import_contract_is_kept() -> None:
    done = _lint_imports(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 kept, 0 broken" in done.stdout, done.stdout


def test_an_import_from_a_lower_layer_up_breaks_the_layers_contract(tmp_path: Path) -> None:
    """The contract is not vacuous: the store importing the engine, as it once did to check a run
    before writing its folder, is reported."""
    shutil.copytree(REPO / "privgame", tmp_path / "privgame", ignore=shutil.ignore_patterns("__pycache__"))
    store = tmp_path / "privgame" / "store" / "folders.py"
    upward = "\n\ndef _upward() -> None:\n    from privgame.games import engine  # noqa: F401\n"
    store.write_text(store.read_text() + upward)
    done = _lint_imports(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "privgame.store is not allowed to import privgame.games" in done.stdout, done.stdout


def _cycles(package: str) -> list[list[str]]:
    """The groups of modules of ``package`` that import one another in a circle (Tarjan)."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=True)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_of_the_package_imports_itself_through_others() -> None:
    assert _cycles("privgame") == []


def test_the_cycle_check_finds_a_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "circle"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from circle import b\n")
    (package / "b.py").write_text("from circle import c\n")
    (package / "c.py").write_text("import circle.a, circle.d\n")
    annotations_only = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import circle.a\n"
    (package / "d.py").write_text(annotations_only)  # d imports a for annotations only: no cycle
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _cycles("circle") == [["circle.a", "circle.b", "circle.c"]]


FACE_MODULES = {"privgame.service", "privgame.outputs.figures", "privgame.core.errors"}
"""What the dashboard may import of the package: the service, the charts and the errors."""


def _is_module(name: str) -> bool:
    """Whether ``name`` (dotted) is a module or package of the repository."""
    path = REPO.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _package_imports(path: Path) -> set[str]:
    """The modules of ``privgame`` that the file at ``path`` imports, at any depth (those under
    ``if TYPE_CHECKING:`` aside: annotations only)."""
    tree = ast.parse(path.read_text())
    annotations_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in annotations_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "privgame":
            # A name imported from a package is a module when the package holds one of that name.
            for alias in node.names:
                found.add(
                    f"{node.module}.{alias.name}"
                    if _is_module(f"{node.module}.{alias.name}")
                    else node.module
                )
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "privgame"}
    return found


def test_the_dashboard_reaches_the_package_through_the_service_only() -> None:
    faces = [REPO / "app.py", *sorted((REPO / "pages").glob("*.py"))]
    assert len(faces) >= 10
    beyond = {path.name: sorted(_package_imports(path) - FACE_MODULES) for path in faces}
    assert {name: found for name, found in beyond.items() if found} == {}
    assert set().union(*(_package_imports(path) for path in faces)) <= FACE_MODULES


def test_the_import_reader_sees_every_form(tmp_path: Path) -> None:
    path = tmp_path / "page.py"
    path.write_text(
        "import privgame.store.folders\nfrom privgame.core import metrics\n"
        "from privgame.games.audit import x\nfrom privgame import __version__\n"
        "def f():\n    from privgame.games.engine import y\n"
    )
    assert _package_imports(path) == {
        "privgame.store.folders",
        "privgame.core.metrics",
        "privgame.games.audit",
        "privgame.games.engine",
        "privgame",
    }


CLI_MODULES = FACE_MODULES | {
    "privgame._version",  # its version
    "privgame.core.defaults",
    "privgame.core.parameters",
    "privgame.core.options",
    "privgame.settings.generator_options",
    "privgame.studies.request",
    "privgame.cli.terminal",
    "privgame.outputs.study_figures",
}
"""What the command line may import besides its own modules: the service, the figures and the
errors as the pages do, and the light modules its parsers are built from (``--help`` must not
load numpy or pandas)."""


def test_the_command_line_reaches_the_engine_through_the_service() -> None:
    files = [
        REPO / "privgame" / "cli" / "main.py",
        *sorted((REPO / "privgame" / "cli" / "commands").glob("*.py")),
    ]
    beyond = {
        path.name: sorted(
            m for m in _package_imports(path) - CLI_MODULES if not m.startswith("privgame.cli.commands")
        )
        for path in files
    }
    assert {name: found for name, found in beyond.items() if found} == {}


def test_every_name_of_the_service_resolves() -> None:
    import privgame.service as service

    assert len(service.__all__) > 100
    missing = [name for name in service.__all__ if getattr(service, name, None) is None]
    assert missing == []
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        service.nothing_here  # noqa: B018 - the attribute access is the test


def test_the_import_graph_sees_every_module_the_service_reaches() -> None:
    """The service's names are imported by ordinary import statements, so the import contracts
    judge its real dependencies: every module its loaders import is one the import graph says the
    service imports (when it read a table through importlib, the graph saw 11 of 39)."""
    import inspect

    import privgame.service as service

    graph = grimp.build_graph("privgame", exclude_type_checking_imports=True)
    seen = graph.find_modules_directly_imported_by("privgame.service")
    imported = {
        module
        for loader in service._LOADERS
        for module in re.findall(r"from (privgame[\w.]*) import", inspect.getsource(loader))
    }
    assert len(imported) == len(service._LOADERS) > 30
    # ``from privgame.core import metrics`` is an import of the submodule privgame.core.metrics.
    unseen = [m for m in imported if not any(s == m or s.startswith(f"{m}.") for s in seen)]
    assert unseen == []
    for loader in service._LOADERS:  # each loader gives exactly the names it imports
        assert set(loader()) == set(loader.__code__.co_varnames)


def test_no_page_holds_a_bare_string_that_streamlit_would_write() -> None:
    """A docstring after a page's first statement is a bare expression, which Streamlit's "magic"
    writes on the page (two such notes once showed on the Data page). Pages use comments."""
    found = []
    for path in [REPO / "app.py", *sorted((REPO / "pages").glob("[0-9]*.py"))]:
        body = ast.parse(path.read_text()).body
        found += [
            f"{path.name}:{node.lineno}"
            for node in body[1:]
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        ]
    assert found == []
    assert "magicEnabled = false" in (REPO / ".streamlit" / "config.toml").read_text()
