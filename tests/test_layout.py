"""The layout: each room of `arena` imports only the rooms below it, the third-party libraries
stay where they are allowed, no two modules import each other (directly or round a circle), and no
room holds more than a quarter of the code. Checked by importing every module of a package in a
fresh interpreter (what it drags in, lazily imported modules aside) and by reading every import
statement (lazy ones inside functions included).

The module graph: an edge for every import statement of a module of arena/, rules/ or bots/ that
names another of their modules (`from a.b import c` is an edge to a.b.c when that is a module, else
to a.b), at the top or inside a function alike. Imports under `if TYPE_CHECKING:` are left out:
they never run, and a function may well name the type of the object it is handed (the season's
logic is handed the `Course`) without depending on the module that makes it.

"The code", for the rooms' shares: the non-blank lines of the .py files of arena/, rules/ and bots/
(comments and docstrings count: a newcomer reads them too); a room is a folder of arena/ (its
subfolders included), and rules/ and bots/ are one room each."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("arena.cell", "arena.match", "arena.tournament", "arena.site", "arena.terminal", "arena.similarity",
         "arena.course", "arena.course_web", "arena.cli")

FORBIDDEN = {
    "rules": ("arena", "bots"),
    "arena.cell": ("arena.match", "arena.tournament", "arena.site", "arena.terminal", "arena.course",
                   "arena.course_web", "arena.cli", "bots", "rules", "zmq", "msgpack"),
    "arena.match": ("arena.tournament", "arena.site", "arena.terminal", "arena.course", "arena.course_web",
                    "arena.cli", "bots"),
    "arena.tournament": ("arena.site", "arena.terminal", "arena.course", "arena.course_web", "arena.cli",
                         "bots"),
    "arena.terminal": ("arena.tournament", "arena.site", "arena.course", "arena.course_web", "arena.cli",
                       "bots"),
    "arena.site": ("arena.terminal", "arena.course", "arena.course_web", "arena.cli", "bots"),
    "arena.similarity": ("arena.cell", "arena.match", "arena.tournament", "arena.site", "arena.terminal",
                         "arena.course", "arena.course_web", "arena.cli", "bots", "rules", "zmq", "msgpack"),
    "arena.course": ("arena.terminal", "arena.course_web", "arena.cli", "bots"),
    "arena.course_web": ("arena.terminal", "arena.cli", "bots"),
    "bots": ("arena.tournament", "arena.site", "arena.terminal", "arena.course", "arena.course_web",
             "arena.cli"),
}
"""Package -> what neither it nor anything it imports may import."""

ONLY_IN = {
    "zmq": ("arena/match/protocol.py",),
    "msgpack": ("arena/match/protocol.py",),
    "pyseccomp": ("arena/cell/seccomp.py",),
    "pandas": ("arena/tournament/standings.py", "arena/site/"),
    "tabulate": ("arena/tournament/standings.py", "arena/site/"),
    "starlette": ("arena/course_web/",),  # the course's web app
    "uvicorn": ("arena/course_web/server.py",  # the server
                "arena/course_web/bounds.py"),  # the guarded h11 protocol
    "argon2": ("arena/course/db/accounts.py",),
    "openskill": ("arena/course/season/ladder.py",),
    "copydetect": (),  # benchmarks/similarity_baseline.py only
    "pygments": ("arena/similarity/fingerprints.py",),
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


CODE = ("arena", "rules", "bots")
ROOM_SHARE_MAX = 0.25
"""No room may hold more than this share of the code."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(tree: ast.AST) -> set[int]:
    """Line numbers of the imports inside `if TYPE_CHECKING:` blocks."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            lines.update(n.lineno for block in node.body for n in ast.walk(block)
                         if isinstance(n, ast.Import | ast.ImportFrom))
    return lines


def _edges(path: Path, modules: set[str], me: str | None = None) -> set[str]:
    """The modules of `modules` that `path` (module `me`, by default the one its place under ROOT
    says) imports at run time, at the top or lazily."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skip = _type_checking_only(tree)
    me = me or _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or node.lineno in skip:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            names = [f"{module}.{alias.name}" for alias in node.names]
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != me:
                found.add(name)
    return found


def module_graph() -> dict[str, set[str]]:
    """Module -> the modules it imports, over arena/, rules/ and bots/."""
    paths = {_module_name(p): p for p in _sources(*CODE)}
    modules = set(paths)
    return {name: _edges(path, modules) for name, path in paths.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strongconnect(start: str) -> None:
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strongconnect(node)
    return sorted(found)


def test_no_module_imports_itself_round_a_circle():
    found = circles(module_graph())
    print(f"import circles between the {len(module_graph())} modules of {', '.join(CODE)}: "
          + ("; ".join(" <-> ".join(c) for c in found) if found else "none"))
    assert not found, found


def test_the_circle_finder_sees_a_circle_through_a_lazy_import(tmp_path):
    """The checker itself: a -> b at the top, b -> c lazily, c -> a: one circle; TYPE_CHECKING is no edge."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    probe = tmp_path / "probe.py"
    probe.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x.y\n"
                     "def f():\n    from x import z\n")
    assert _edges(probe, {"x.y", "x.z", "x"}, "probe") == {"x.z"}


def _room(path: Path) -> str:
    parts = path.relative_to(ROOT).parts
    return "/".join(parts[:2]) if parts[0] == "arena" and len(parts) > 2 else parts[0]


def room_lines() -> dict[str, int]:
    """Room -> its non-blank lines of Python (see the module docstring)."""
    lines: dict[str, int] = {}
    for path in _sources(*CODE):
        count = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
        lines[_room(path)] = lines.get(_room(path), 0) + count
    return lines


def test_no_room_holds_more_than_a_quarter_of_the_code():
    lines = room_lines()
    total = sum(lines.values())
    print(f"the code: {total} non-blank lines of Python in {', '.join(CODE)}")
    for room, count in sorted(lines.items(), key=lambda kv: -kv[1]):
        print(f"  {room:20} {count:6} {count / total:6.1%}")
    big = {room: f"{count / total:.1%}" for room, count in lines.items() if count > ROOM_SHARE_MAX * total}
    assert not big, f"rooms over a quarter of the code: {big}"


def test_only_the_server_wires_the_web_front_and_the_background_together():
    """arena.course.background (the server's threads) is imported by arena/course_web/server.py
    alone; below it (course.py, season/, db/, config/) nothing imports it: arrows point one way."""
    wrong = []
    for path in _sources("arena"):
        where = path.relative_to(ROOT).as_posix()
        if where == "arena/course_web/server.py" or where.startswith("arena/course/background/"):
            continue
        wrong += [f"{where} imports {name}" for name in _imports(path)
                  if name.startswith("arena.course.background")]
    assert not wrong


def _module_state(path: Path) -> list[str]:
    """A module's run-time wiring: `global` statements, and module-level names bound to an empty
    dict, set or list (a registry the running code fills) or annotated as possibly None."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = [f"global {', '.join(n.names)}" for n in ast.walk(tree) if isinstance(n, ast.Global)]
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target, value, note = node.target.id, node.value, ast.unparse(node.annotation)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            target, value, note = node.targets[0].id, node.value, ""
        else:
            continue
        empty = (isinstance(value, ast.Dict | ast.Set | ast.List) and not getattr(value, "elts", None)
                 and not getattr(value, "keys", None)) or (
            isinstance(value, ast.Call) and ast.unparse(value) in ("dict()", "set()", "list()"))
        if empty or "None" in note:
            found.append(target)
    return found


def test_the_course_keeps_no_wiring_in_module_globals():
    """What decides how the course's games are played, which runner a ladder request wakes, the
    final's thread and the phases' lock belong to the objects that own them (the Course), not to
    module globals every course of a process shares."""
    found = {path.relative_to(ROOT).as_posix(): names for path in _sources("arena/course", "arena/course_web")
             if (names := _module_state(path))}
    assert not found, found
