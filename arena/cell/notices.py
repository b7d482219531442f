"""What the cell will not enforce on this machine, said once before a run.

`notices(mode, suspend)` gives the lines a run prints before it starts (on stderr, even when quiet):
bots not isolated (`sandbox = "auto"` where bubblewrap cannot run), sandboxed bots without a
cgroup (not root and no delegated cgroup: which limits are then not enforced), and bots that are
not frozen while their opponent thinks although `suspend` was left to its default. For
`sandbox = "on"` where bots cannot be isolated or have no cgroup, SandboxUnavailable (one line,
with the fix) instead.
"""
from __future__ import annotations

from arena.cell import cgroup, sandbox


def notices(mode: str, suspend: bool | None = None) -> list[str]:
    """The lines to print before a run with `sandbox = mode` and `suspend` (None: the default)."""
    isolation = sandbox.decide(mode)
    lines = []
    warning = isolation.warning()
    if warning:
        lines.append(warning)
    layout = cgroup.detect() if isolation.sandboxed else None
    if layout is not None and layout.kind == "none":
        lines.append(f"warning: sandboxed bots have no cgroup here ({layout.reason}), so these limits are "
                     f"NOT enforced: {cgroup.UNENFORCED}; fix: {cgroup.FIX}")
    elif suspend is None and layout is None:
        why = "sandbox = off" if mode == "off" else "not sandboxed"
        lines.append(f"note: bots may think on their opponent's time (no cgroup freezer: {why}); "
                     "suspend = true (--suspend) stops them with SIGSTOP instead")
    return lines
