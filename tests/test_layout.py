"""The layout: each room of `arena` imports only the rooms below it, and the third-party libraries
stay where they are allowed. Checked by importing every module of a package in a fresh interpreter
(what it drags in, lazily imported modules aside) and by reading every import statement (lazy ones
included)."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("arena.cell", "arena.match", "arena.tournament", "arena.site", "arena.terminal", "arena.course",
         "arena.cli")

FORBIDDEN = {
    "rules": ("arena", "bots"),
    "arena.cell": ("arena.match", "arena.tournament", "arena.site", "arena.terminal", "arena.course",
                   "arena.cli", "bots", "rules", "zmq", "msgpack"),
    "arena.match": ("arena.tournament", "arena.site", "arena.terminal", "arena.course", "arena.cli", "bots"),
    "arena.tournament": ("arena.site", "arena.terminal", "arena.course", "arena.cli", "bots"),
    "arena.terminal": ("arena.tournament", "arena.site", "arena.course", "arena.cli", "bots"),
    "arena.site": ("arena.terminal", "arena.course", "arena.cli", "bots"),
    "arena.course": ("arena.terminal", "arena.cli", "bots"),
    "bots": ("arena.tournament", "arena.site", "arena.terminal", "arena.course", "arena.cli"),
}
"""Package -> what neither it nor anything it imports may import."""

ONLY_IN = {
    "zmq": ("arena/match/protocol.py",),
    "msgpack": ("arena/match/protocol.py",),
    "pyseccomp": ("arena/cell/seccomp.py",),
    "pandas": ("arena/tournament/standings.py", "arena/site/"),
    "tabulate": ("arena/tournament/standings.py", "arena/site/"),
    "starlette": ("arena/course/web/app.py", "arena/course/web/season_pages.py",  # the web app: its pages
                  "arena/course/web/bounds.py"),  # and its bounds on requests
    "uvicorn": ("arena/course/server.py", "arena/course/web/bounds.py"),  # bounds: the guarded h11 protocol
    "argon2": ("arena/course/db/accounts.py",),
    "openskill": ("arena/course/season/ladder.py",),
    "copydetect": ("arena/course/season/similarity.py",),
}
"""Third-party module -> the only files of `arena` (a path ending in / is a folder) that import it."""

_IMPORT_ALL = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    if not info.name.endswith("__main__"):
        importlib.import_module(info.name)
print(json.dumps(sorted(sys.modules)))
"""


def _modules_after_importing(package: str) -> list[str]:
    """Every module loaded after importing `package` and all of its modules in a fresh interpreter."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path)
    done = subprocess.run([sys.executable, "-c", _IMPORT_ALL, package], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _exists(package: str) -> bool:
    return (ROOT / package.replace(".", "/") / "__init__.py").is_file()


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_package_imports_only_the_rooms_below_it(package):
    if not _exists(package):
        pytest.skip(f"{package} is not in this tree")
    loaded = _modules_after_importing(package)
    assert any(m == package or m.startswith(package + ".") for m in loaded)
    wrong = [m for m in loaded for bad in FORBIDDEN[package] if m == bad or m.startswith(bad + ".")]
    assert not wrong, f"importing {package} loads {wrong}"


def _imports(path: Path, package: str | None = None) -> set[str]:
    """The absolute module names `path` (a module of `package`, by default the one its place under
    ROOT says) imports, anywhere in the file, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    if package is None:
        package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _sources(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py") if ".venv" not in p.parts)


def _top(name: str) -> str:
    return name.split(".")[0]


def test_third_party_libraries_are_imported_only_where_allowed():
    wrong = []
    for path in _sources("arena"):
        where = path.relative_to(ROOT).as_posix()
        for name in _imports(path):
            allowed = ONLY_IN.get(_top(name))
            if allowed is not None and not any(where == a or (a.endswith("/") and where.startswith(a))
                                               for a in allowed):
                wrong.append(f"{where} imports {name}")
    assert not wrong


def test_nothing_imports_the_command_line():
    wrong = []
    for path in _sources("arena", "rules", "bots"):
        where = path.relative_to(ROOT).as_posix()
        if where.startswith("arena/cli/") or where == "arena/__main__.py":  # the command itself
            continue
        wrong += [f"{where} imports {name}" for name in _imports(path)
                  if name == "arena.cli" or name.startswith("arena.cli.")]
    assert not wrong


def test_the_rooms_and_rules_do_not_import_upwards_even_lazily():
    """What `FORBIDDEN` says, read from every import statement (a lazy import inside a function
    escapes the fresh-interpreter check)."""
    wrong = []
    for package, forbidden in FORBIDDEN.items():
        if not _exists(package):
            continue
        for path in _sources(package.replace(".", "/")):
            for name in _imports(path):
                if any(name == bad or name.startswith(bad + ".") for bad in forbidden):
                    wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not wrong


def test_the_scan_sees_imports_of_every_kind(tmp_path):
    """The checker itself: a lazy import, a from-import and a relative import are all seen."""
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    import zmq\n    from arena.cli import main\n    from . import spec\n"
                      "    from .. import terminal\n")
    found = _imports(module, "arena.match")
    assert {"zmq", "arena.cli", "arena.cli.main", "arena.match", "arena.match.spec", "arena",
            "arena.terminal"} <= found
