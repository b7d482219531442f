"""One way to write a file of the course's: whole or absent after any stop (kill -9, a power cut).
The text goes to a fresh temporary name beside the file (never through a link, never over another
file), is fsynced, renamed over the file, and the folder is fsynced so the rename lasts."""
from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_atomically(path: Path, data: bytes | str, mode: int = 0o600) -> Path:
    """`data` (text as UTF-8) to `path` with `mode`, atomically and durably; `path`."""
    content = data.encode("utf-8") if isinstance(data, str) else data
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.part")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
            f.flush()
            os.fchmod(f.fileno(), mode)  # whatever the umask took away
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return path


def fsync_dir(path: Path) -> None:
    """Make the entries of folder `path` (a rename into it) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
