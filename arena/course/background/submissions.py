"""The submission workers: threads that take the oldest queued job from the store, build and
qualify it (arena.course.season.jobs.run_job) and record its one final status.

On `start()` every job left queued or interrupted (building, testing) by a server that stopped,
however it stopped, is queued again: each submission ends in exactly one final status. One
`Workers` a course directory at a time. Each job runs in a thread of its own under a deadline
(`job_deadline_s`: its build, its games, a margin) the worker enforces from outside: a job past it
ends failed, reason "stuck" naming the step it was in, and the worker takes the next one (the stuck
thread is abandoned and may write nothing more). Nothing a submission holds can stop the queue.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from arena.cell import sandbox
from arena.course.background.loop import Loop
from arena.course.db.states import SubmissionStatus
from arena.course.season.games import GamePlayer
from arena.course.season.jobs import Abandoned, Job, hide_from_bots, job_deadline_s, run_job
from arena.tournament.backends import Backend, LocalPool

if TYPE_CHECKING:
    from arena.course.course import Course

log = logging.getLogger(__name__)

IDLE_WAIT_S = 5.0
"""A worker with nothing to do looks at the queue again this often even when not woken."""


class Workers(Loop):
    """`concurrency` threads building and qualifying the course's queued submissions.

    `start()` requeues what a stopped server left running, starts the game player and hands it to
    the course (`Course.player`: every course game is played through it while the workers run),
    then starts the threads; `wake()` says a job was queued (the course's `submit` and `requeue`
    call it); `stop()` lets each thread finish its job and ends them. SandboxUnavailable from
    `start()` where the course's bots cannot be sandboxed (unless its limits say sandbox "off":
    --unsafe-no-sandbox). `deadline_s`: how long a job may run before it fails as "stuck"
    (default: job_deadline_s)."""

    def __init__(self, course: Course, concurrency: int = 1,
                 make_backend: Callable[[], Backend] | None = None, deadline_s: float | None = None) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        super().__init__("course-worker", IDLE_WAIT_S, threads=concurrency)
        self.course = course
        self.concurrency = concurrency
        self.deadline_s = deadline_s if deadline_s is not None else job_deadline_s(course.config)
        self.player = GamePlayer(make_backend or (lambda: LocalPool(concurrency=concurrency, reuse=False)))
        """Where the games are played (Course.play, for every thread, while these workers run)."""
        course.listeners.append(self.wake)

    def start(self) -> None:
        sandbox.decide(self.course.config.limits.sandbox)  # refuse before anything runs
        hide_from_bots(self.course.directory)  # inherited by every process the games start
        requeued = self.course.store.requeue_interrupted()
        if requeued:
            log.info("requeued interrupted submissions %s", requeued)
        self.player.start()
        self.course.player = self.player
        super().start()

    def stop(self, timeout_s: float | None = None) -> None:
        """Stop taking jobs; wait (up to `timeout_s`) for the running ones to end."""
        self._stopping.set()
        self._wake.set()
        self.join(timeout_s)
        if self.course.player is self.player:
            self.course.player = None
        self.player.stop()  # games still in flight end at once; their jobs are requeued at the next start
        self.join(timeout_s)

    def run_once(self) -> int:
        """Build and qualify queued submissions, one after the other, until none is left (or the
        workers stop); how many."""
        done = 0
        while not self.stopping:
            submission_id = self.course.store.claim()
            if submission_id is None:
                break
            self._watch(submission_id)
            done += 1
        return done

    def thread_done(self) -> None:
        self.course.store.close()  # this thread's connection

    def _watch(self, submission_id: int) -> None:
        """Run the job in a thread of its own; past the deadline, fail it as stuck and leave its thread."""
        job = Job(submission_id)
        thread = threading.Thread(target=self._run_job, args=(job,), name=f"course-job-{submission_id}",
                                  daemon=True)
        began = time.monotonic()
        thread.start()
        thread.join(self.deadline_s)
        if not thread.is_alive():
            return
        store = self.course.store
        detail = (f"the job was still in its step \"{job.step}\" after {time.monotonic() - began:.0f} s, "
                  f"past its deadline of {self.deadline_s:g} s (its build's time, its games at their longest "
                  "and a margin): it was stopped")
        if job.abandon(lambda: store.finish(submission_id, SubmissionStatus.FAILED, "stuck", detail)):
            log.error("submission %s: stuck in step %r past %g s; failed, its thread abandoned",
                      submission_id, job.step, self.deadline_s)

    def _run_job(self, job: Job) -> None:
        try:
            run_job(self.course.config, self.course.store, job.submission_id, job, self.player.play)
            for listener in list(self.course.phase_listeners):  # a version qualified: its phase checks
                listener()
        except Abandoned:  # its end came after the worker had failed it as stuck
            log.warning("submission %s: its abandoned job ended (in step %s)", job.submission_id, job.step)
        finally:
            self.course.store.close()  # this thread's connection
