"""The `rules` package of another git commit, extracted beside the working tree's, for side-by-side
speed and agreement checks (benchmarks/rules_speed.py, benchmarks/rules_agreement.py).
"""
from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_COMMIT = "5dc3553"
"""The rules before issue 26 ("a faster rules library")."""


def extract(commit: str) -> Path:
    """A temporary directory holding `rules/` as it was at `commit` (git archive); SystemExit saying
    why when git or the commit is missing (a shallow clone may lack it: `git fetch --unshallow`)."""
    try:
        data = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit, "rules"],
                              capture_output=True, check=True).stdout
    except FileNotFoundError:
        raise SystemExit("git is not installed: the baseline rules come from `git archive`") from None
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"cannot read rules/ at commit {commit!r} from the git repository at {ROOT}: "
                         f"{exc.stderr.decode(errors='replace').strip()} (a shallow clone may lack it: "
                         "git fetch --unshallow)") from None
    where = Path(tempfile.mkdtemp(prefix=f"rules-{commit}-"))
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(where, filter="data")
    return where


class Rules:
    """One tree's games by name, as `rules.load` and `rules.names` give them."""

    def __init__(self, classes: dict[str, type]) -> None:
        self.classes = classes

    def names(self) -> list[str]:
        return sorted(self.classes)

    def load(self, name: str, **params: Any) -> Any:
        return self.classes[name](**params)


def load(tree: Path | str) -> Rules:
    """The games of the `rules` package found in directory `tree`, imported as a separate module tree
    (its modules are taken out of sys.modules again, so that two trees live side by side; `rules.load`
    would import by name at call time, hence the game classes are kept instead)."""
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "rules" or k.startswith("rules.")}
    sys.path.insert(0, str(tree))
    try:
        import rules

        if Path(rules.__file__).resolve().parent != Path(tree).resolve() / "rules":
            raise SystemExit(f"imported rules from {rules.__file__}, not from {tree}")
        return Rules({name: type(rules.load(name)) for name in rules.names()})
    finally:
        sys.path.remove(str(tree))
        for k in [k for k in sys.modules if k == "rules" or k.startswith("rules.")]:
            del sys.modules[k]
        sys.modules.update(saved)
