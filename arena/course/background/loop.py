"""`Loop`: the one shape of the server's background threads (the submission workers, the ladder's
runner, the season clock). A loop does what there is to do now (`run_once`), then waits on an
Event until `wake()` or `interval_s` seconds; `stop()` sets it stopping and joins its threads.
A bug in one round is logged and the loop goes on: nothing a bot or a student sends stops it.

    class Reminder(Loop):
        def run_once(self) -> None: ...
    reminder = Reminder("reminder", interval_s=5.0)
    reminder.start(); reminder.wake(); reminder.stop(10)
"""
from __future__ import annotations

import logging
import threading

log = logging.getLogger(__name__)


class Loop:
    """`threads` threads named `name` (`name-N` for more than one), each running `run_once` then
    waiting for `wake()` or `interval_s` seconds, until `stop()`. Subclasses write `run_once`,
    and `thread_done` for what each thread must release (its database connection)."""

    def __init__(self, name: str, interval_s: float, threads: int = 1) -> None:
        if threads < 1:
            raise ValueError(f"a loop needs at least one thread, got {threads}")
        self.name = name
        self.interval_s = interval_s
        self.threads = threads
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self.rounds = 0
        """Rounds run so far, by all its threads (a test waits for the next one)."""
        self._rounds_lock = threading.Lock()

    def run_once(self) -> object:
        """Do what is due now (a round of the loop); a subclass's work."""
        raise NotImplementedError

    def thread_done(self) -> None:
        """Called in each thread as it ends (close its database connection)."""

    @property
    def stopping(self) -> bool:
        """`stop()` was called: a long round should end early."""
        return self._stopping.is_set()

    def start(self) -> None:
        """Start the threads (again after a stop)."""
        self._stopping.clear()
        for n in range(self.threads):
            name = self.name if self.threads == 1 else f"{self.name}-{n}"
            thread = threading.Thread(target=self._loop, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def wake(self) -> None:
        """Run a round now instead of at the next interval (a job was queued, a game asked for)."""
        self._wake.set()

    def stop(self, timeout_s: float | None = None) -> None:
        """Stop once the rounds under way end; wait up to `timeout_s` for each thread."""
        self._stopping.set()
        self._wake.set()
        self.join(timeout_s)

    def join(self, timeout_s: float | None = None) -> None:
        """Wait up to `timeout_s` for each thread; the ones still alive are kept."""
        for thread in self._threads:
            thread.join(timeout_s)
        self._threads = [t for t in self._threads if t.is_alive()]

    def alive(self) -> bool:
        """Some thread of the loop is still running."""
        return any(t.is_alive() for t in self._threads)

    def _loop(self) -> None:
        try:
            while not self._stopping.is_set():
                self._wake.clear()  # a wake during the round is seen by the wait below
                try:
                    self.run_once()
                except Exception:  # a bug of ours: logged, the loop goes on
                    log.exception("%s", self.name)
                with self._rounds_lock:
                    self.rounds += 1
                if not self._stopping.is_set():
                    self._wake.wait(self.interval_s)
        finally:
            self.thread_done()
