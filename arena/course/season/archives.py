"""What an upload may be, checked before it is stored, and its unpacking into a build folder.

An upload is one source file (`NAME.py`: a protocol-v1 bot using the SDK, or with protocol
"stdio" a bot speaking the text protocol), or an archive (zip, tar, tar.gz/tgz, tar.bz2, tar.xz)
holding `build.sh` at its top, or in its one top folder, as the starter kits in examples/kits/ do.
Refused, with a message a student understands: paths that leave the folder (`../x`, `/etc/x`),
links, devices and other special files, more than MAX_MEMBERS members or MAX_UNPACKED_BYTES
unpacked (read from the headers, and counted again while unpacking, which never trusts them),
no build.sh, an empty or unreadable file. Nothing here runs what was uploaded.
"""
from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from arena.cell.sandbox import KIT_MARK

MAX_MEMBERS = 2000
"""Files and folders an archive may hold."""
MAX_UNPACKED_BYTES = 100_000_000
"""What an archive may hold unpacked, all members together (bytes)."""
MAX_NAME_CHARS = 255
KINDS = ("python", "stdio", "archive")
PROTOCOLS = ("v1", "stdio")
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
SHOWN_MAX_BYTES = 200_000
"""A member larger than this is listed, not shown, by `source_files`."""


class Refused(ValueError):
    """An upload (or a request about one) that is not taken: the message says why, for the student."""


@dataclass(frozen=True)
class Member:
    """One file or folder of an archive, as it will be unpacked: `path` relative to the build
    folder (the one top folder stripped), `executable` from its mode."""

    path: str
    is_dir: bool
    size: int
    executable: bool


def kind_of(filename: str, data: bytes, protocol: str = "v1") -> str:
    """"python", "stdio" or "archive" for an upload; Refused names what is wrong with it (the
    archive's members are all checked)."""
    if protocol not in PROTOCOLS:
        raise Refused(f"unknown protocol {protocol!r}: use v1 (the SDK) or stdio (the text protocol)")
    name = clean_filename(filename)
    if not data:
        raise Refused(f"{name} is empty")
    if name.lower().endswith(".py"):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(f"{name} is not UTF-8 text") from None
        return "stdio" if protocol == "stdio" else "python"
    if name.lower().endswith(ARCHIVE_SUFFIXES):
        members(name, data)
        return "archive"
    raise Refused(f"{name}: upload one .py file, or a .zip or .tar(.gz) archive with build.sh at its top "
                  "(as the starter kits)")


def clean_filename(filename: str) -> str:
    """The upload's file name without any folder; Refused for none at all."""
    name = PurePosixPath(str(filename).replace("\\", "/")).name.strip()
    if not name or name in (".", "..") or "\0" in name or len(name) > MAX_NAME_CHARS:
        raise Refused(f"bad file name {filename!r}")
    return name


def members(filename: str, data: bytes) -> list[Member]:
    """The members of the archive `data` (named `filename`), checked from their headers, the one
    top folder stripped when build.sh lies in it; Refused for anything unsafe or a wrong layout."""
    entries = []
    total = 0
    for entry in _entries(filename, data):  # a tar is read as it goes: stop at the first limit passed
        entries.append(entry)
        total += entry[2]
        if len(entries) > MAX_MEMBERS:
            raise Refused(f"the archive holds more than {MAX_MEMBERS} files and folders; that is the limit")
        if total > MAX_UNPACKED_BYTES:
            raise Refused(f"the archive unpacks to more than {_mb(MAX_UNPACKED_BYTES)}; that is the limit")
    paths = [(_safe_path(name), is_dir, size, mode) for name, is_dir, size, mode in entries]
    paths = [p for p in paths if p[0] != ""]
    files = {path for path, is_dir, _, _ in paths if not is_dir}
    prefix = ""
    if KIT_MARK not in files:
        tops = {path.split("/", 1)[0] for path, _, _, _ in paths}
        if len(tops) == 1 and f"{next(iter(tops))}/{KIT_MARK}" in files:
            prefix = next(iter(tops)) + "/"
        else:
            raise Refused(f"no {KIT_MARK} at the top of the archive (put build.sh beside your sources, as in "
                          "the starter kits; its last line printed is the command that runs the bot)")
    found: list[Member] = []
    seen: set[str] = set()
    for path, is_dir, size, mode in paths:
        if prefix and path + "/" == prefix:
            continue
        path = path[len(prefix):]
        if path in seen:
            raise Refused(f"the archive holds {path!r} twice")
        seen.add(path)
        found.append(Member(path, is_dir, size, bool(mode & 0o111)))
    return found


def _one_line(exc: BaseException) -> str:
    """An error's first line (tarfile lists every compression it tried, one a line)."""
    lines = str(exc).strip().splitlines()
    return lines[0].rstrip(":") if lines else type(exc).__name__


def _mb(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def _safe_path(name: str) -> str:
    """`name` as a relative path inside the build folder ("" for the top itself); Refused for an
    absolute path, a `..` part, a backslash or a NUL."""
    if "\0" in name or "\\" in name:
        raise Refused(f"unsafe path {name!r} in the archive")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise Refused(f"unsafe path {name!r} in the archive (an absolute path)")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Refused(f"unsafe path {name!r} in the archive")
    if any(len(p) > MAX_NAME_CHARS for p in parts):
        raise Refused(f"a name in the archive is longer than {MAX_NAME_CHARS} characters")
    return "/".join(parts)


def _entries(filename: str, data: bytes) -> Iterator[tuple[str, bool, int, int]]:
    """(name, is a folder, size, mode) of each member, from the headers; Refused for a link, a
    device or any other special file, or an archive that cannot be read."""
    if filename.lower().endswith(".zip"):
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
            infos = archive.infolist()
        except (zipfile.BadZipFile, ValueError, EOFError) as exc:
            raise Refused(f"{filename} is not a readable zip archive ({_one_line(exc)})") from None
        for info in infos:
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if kind == stat.S_IFLNK:
                raise Refused(f"{info.filename!r} in the archive is a symbolic link: links are not taken")
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise Refused(f"{info.filename!r} in the archive is not a regular file or folder")
            if info.flag_bits & 0x1:
                raise Refused(f"{info.filename!r} in the archive is encrypted")
            yield info.filename, info.is_dir(), info.file_size, mode
        return
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            for info in archive:  # one header at a time (a compressed tar is unpacked as it is read)
                if info.issym() or info.islnk():
                    raise Refused(f"{info.name!r} in the archive is a link: links are not taken")
                if not (info.isfile() or info.isdir()):
                    raise Refused(f"{info.name!r} in the archive is not a regular file or folder")
                yield info.name, info.isdir(), info.size, info.mode
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise Refused(f"{filename} is not a readable tar archive ({_one_line(exc)})") from None


def _contents(filename: str, data: bytes) -> Iterator[tuple[str, io.BufferedIOBase | None]]:
    """(name as in the archive, a reader of its bytes, None for a folder) of each member."""
    if filename.lower().endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                if info.is_dir():
                    yield info.filename, None
                else:
                    with archive.open(info) as reader:
                        yield info.filename, reader  # type: ignore[misc]
        return
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
        for info in archive:
            yield info.name, archive.extractfile(info) if info.isfile() else None  # type: ignore[misc]


def read_members(filename: str, data: bytes) -> Iterator[tuple[Member, bytes]]:
    """Each file of a checked archive with its bytes (folders left out), counting what is read:
    Refused as soon as the members together unpack to more than MAX_UNPACKED_BYTES, or one to
    more than its header said, whatever the headers claim."""
    checked = {m.path: m for m in members(filename, data)}
    prefix = _prefix(filename, data)
    total = 0
    for name, reader in _contents(filename, data):
        safe = _safe_path(name)
        path = safe[len(prefix):] if prefix and safe.startswith(prefix) else safe
        member = checked.get(path)
        if reader is None or member is None or member.is_dir:
            continue
        try:
            content = _read_counted(reader, member, path, total)
        except Refused:
            raise
        except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError, ValueError) as exc:
            raise Refused(f"{path!r} in the archive cannot be read ({_one_line(exc)})") from None
        total += len(content)
        yield member, content


def _read_counted(reader: io.BufferedIOBase, member: Member, path: str, total: int) -> bytes:
    """All of a member's bytes, read in chunks; Refused past its header's size or the total limit."""
    chunks = []
    size = 0
    while chunk := reader.read(1 << 16):
        size += len(chunk)
        if size > member.size or total + size > MAX_UNPACKED_BYTES:
            raise Refused(f"the archive unpacks to more than its headers say ({path!r}): "
                          "refused as a zip bomb")
        chunks.append(chunk)
    return b"".join(chunks)


def _prefix(filename: str, data: bytes) -> str:
    """The one top folder `members` strips ("" when build.sh is at the very top)."""
    names = {_safe_path(name) for name, _, _, _ in _entries(filename, data)}
    if KIT_MARK in names:
        return ""
    tops = {n.split("/", 1)[0] for n in names if n}
    return next(iter(tops)) + "/" if len(tops) == 1 else ""


def unpack(filename: str, data: bytes, folder: Path) -> list[Member]:
    """Unpack the archive into `folder` (made empty, 0755), files 0644 or 0755 as their mode
    says (build.sh always executable), never following anything already there; Refused as
    `read_members` says (the folder then holds part of it)."""
    folder.mkdir(mode=0o755, parents=True, exist_ok=False)
    unpacked = []
    for member in members(filename, data):
        if member.is_dir:
            (folder / member.path).mkdir(mode=0o755, parents=True, exist_ok=True)
    for member, content in read_members(filename, data):
        target = folder / member.path
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        executable = member.executable or member.path == KIT_MARK
        write_file(target, content, 0o755 if executable else 0o644)
        unpacked.append(member)
    return unpacked


def write_file(path: Path, content: bytes, mode: int = 0o644) -> None:
    """Create `path` (never through a link, never over a file) with `content` and `mode`."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(content)
    os.chmod(path, mode)  # whatever the umask took away


def code_digest(filename: str, data: bytes, kind: str) -> str:
    """The sha256 of an upload's code, the same for the same code however it was packed: a file's
    bytes; for an archive, each file's path (its one top folder stripped), mode and bytes, in path
    order, so that the same files zipped again (new dates, another order) give the same digest.
    Refused for an archive that cannot be read."""
    if kind != "archive":
        return hashlib.sha256(data).hexdigest()
    digest = hashlib.sha256()
    for member, content in sorted(read_members(filename, data), key=lambda m: m[0].path):
        line = f"{member.path}\0{int(member.executable or member.path == KIT_MARK)}\0{len(content)}\0"
        digest.update(line.encode())
        digest.update(content)
    return digest.hexdigest()


def shown_files(filename: str, data: bytes, kind: str) -> list[tuple[str, str]]:
    """(path, text) of an upload to show its author or staff: the file itself, or each member of
    an archive; binary or large members are named with their size instead of their text."""
    if kind != "archive":
        return [(clean_filename(filename), data.decode("utf-8", "replace"))]
    shown = []
    for member, content in read_members(filename, data):
        if len(content) > SHOWN_MAX_BYTES:
            shown.append((member.path, f"({len(content)} bytes: too large to show)"))
            continue
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None or "\0" in text:
            shown.append((member.path, f"(binary file, {len(content)} bytes)"))
        else:
            shown.append((member.path, text))
    return shown
