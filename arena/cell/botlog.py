"""A bot's output: a pipe the referee reads, kept in a log file only the referee writes, under a cap.

The bot gets the write end of a pipe as its stdout and stderr, never a file: it cannot seek, grow,
`fallocate` or link what it writes to (on a pipe those fail with ESPIPE or EINVAL), so nothing it
prints reserves disk outside its limits. A reader thread per bot empties the pipe as fast as the bot
fills it, so a chatty bot never waits on the referee and the referee never waits on it, and appends
to the log file through the descriptor the referee opened (O_NOFOLLOW) before the bot ran; past the
cap the file is cut back to its last half. `BotLog.read`, `size` and `cap` first take in what is
already in the pipe, so what a bot printed just before it exited is there to read.
"""
from __future__ import annotations

import errno
import os
import select
import stat
import threading
from pathlib import Path

CHUNK_BYTES = 1 << 16
"""What one read takes from the pipe (bytes)."""
TURN_BYTES = 1 << 20
"""What the reader thread takes in at most before it lets go of the log (a bot that prints without
end never keeps the referee from reading its log)."""
POLL_S = 0.1
"""How long the reader thread waits for output before it looks whether the log was closed (seconds)."""
CUT_NOTE = b"[... arena: log cut to its last %d bytes ...]\n"


class BotLog:
    """The log file at `path` (created, 0600; OSError for a symbolic link in its place) fed by a pipe.

    `writer` is the pipe's write end to hand to the bot as stdout and stderr; call `started()` once
    the bot holds it, and `close()` when the bot is gone (what it left in the pipe is kept). `size`,
    `read` and `cap` work before, during and after."""

    def __init__(self, path: Path, cap_bytes: int) -> None:
        self.path = Path(path)
        self.cap_bytes = max(cap_bytes, 2 * len(CUT_NOTE))
        # O_APPEND: a cut truncates under the writes; O_NOFOLLOW: a link put in its place by a bot
        # never makes the referee write elsewhere
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        self._file: int | None = os.open(self.path, flags, 0o600)
        info = os.fstat(self._file)
        self._inode = (info.st_dev, info.st_ino)
        self._pipe: int | None = None
        self.writer: int | None = None
        self._pipe, self.writer = os.pipe2(os.O_CLOEXEC)
        os.set_blocking(self._pipe, False)
        self._lock = threading.Lock()
        self._cuts = 0
        self._cuts_seen = 0
        self._thread: threading.Thread | None = None

    def started(self) -> None:
        """The bot holds the write end now: close the referee's copy (so the pipe ends when every
        process of the bot has) and start reading."""
        self._close_writer()
        self._thread = threading.Thread(target=self._run, name=f"arena-log-{self.path.parent.name}",
                                        daemon=True)
        self._thread.start()

    def _close_writer(self) -> None:
        if self.writer is not None:
            os.close(self.writer)
            self.writer = None

    def _run(self) -> None:
        poller = select.poll()
        with self._lock:
            if self._pipe is None:
                return
            poller.register(self._pipe, select.POLLIN)
        while True:
            try:
                poller.poll(POLL_S * 1000)
            except InterruptedError:  # pragma: no cover - retried by Python since 3.5
                continue
            with self._lock:
                if self._pipe is None or self._pump(TURN_BYTES):
                    return

    def _pump(self, limit: int) -> bool:
        """Move what the pipe holds now (at most `limit` bytes) into the file, cutting it when over
        the cap; True once the pipe has ended (or is closed). Under the lock."""
        if self._pipe is None:
            return True
        taken = 0
        while taken < limit:
            try:
                data = os.read(self._pipe, CHUNK_BYTES)
            except BlockingIOError:
                return False
            except OSError:
                return True
            if not data:
                return True
            taken += len(data)
            self._append(data)
        return False

    def _append(self, data: bytes) -> None:
        if self._file is None:
            return
        try:
            os.write(self._file, data)
            if os.fstat(self._file).st_size > self.cap_bytes:
                self._cut()
        except OSError:  # a full disk: the bot's output is lost, the referee goes on
            pass

    def _cut(self) -> None:
        """Cut the file back to its last half (under the lock, file open)."""
        assert self._file is not None
        size = os.fstat(self._file).st_size
        keep = self.cap_bytes // 2
        tail = os.pread(self._file, keep, max(0, size - keep))
        os.ftruncate(self._file, 0)
        os.write(self._file, CUT_NOTE % len(tail) + tail)
        self._cuts += 1

    def _reader(self) -> int | None:
        """A descriptor to read the log by (the caller closes it), None if it is gone: the file
        the referee opened, never whatever a bot may have put at its path since."""
        if self._file is not None:
            return os.dup(self._file)
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != self._inode or not stat.S_ISREG(info.st_mode):
            os.close(fd)
            return None
        return fd

    def size(self) -> int:
        """The log's size in bytes (after taking in what the pipe holds)."""
        with self._lock:
            self._pump(2 * self.cap_bytes)
            fd = self._reader()
        if fd is None:
            return 0
        try:
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    def read(self, offset: int, max_chars: int) -> str:
        """What the bot wrote since `offset` (the last `max_chars` characters of it; from the start
        when the log was cut since)."""
        with self._lock:
            self._pump(2 * self.cap_bytes)
            fd = self._reader()
        if fd is None:
            return ""
        try:
            return read_since(fd, offset, max_chars)
        finally:
            os.close(fd)

    def cap(self) -> bool:
        """Keep the log under the cap (the reader thread does as it goes); True if it was cut since
        the last call."""
        with self._lock:
            if self._file is not None:
                try:
                    if os.fstat(self._file).st_size > self.cap_bytes:
                        self._cut()
                except OSError:
                    pass
            cut, self._cuts_seen = self._cuts > self._cuts_seen, self._cuts
        return cut

    def close(self) -> None:
        """The bot is gone: take in what it left in the pipe (up to twice the cap), stop reading and
        close the pipe and the file (again: nothing). The log stays readable at its path."""
        with self._lock:
            self._close_writer()
            self._pump(2 * self.cap_bytes)
            for fd in (self._pipe, self._file):
                if fd is not None:
                    try:
                        os.close(fd)
                    except OSError as exc:  # pragma: no cover - ours, open
                        if exc.errno != errno.EBADF:
                            raise
            self._pipe = self._file = None


def read_since(fd: int, offset: int, max_chars: int) -> str:
    """What the log open at `fd` holds from `offset` on (from the start when it was cut shorter
    since): its last `max_chars` characters, "..." before them when more was there; "" on error."""
    try:
        size = os.fstat(fd).st_size
        start = max(offset if offset <= size else 0, size - 4 * max_chars)
        data = os.pread(fd, max(0, size - start), start)
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    return text if len(text) <= max_chars else "..." + text[-max_chars:]
