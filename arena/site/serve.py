"""`arena serve`: the site on http://127.0.0.1:PORT/, rebuilt whenever the results database changes.

A watcher thread looks at results.sqlite (and its WAL) every POLL_S seconds and rebuilds the site
when they changed, and reads the games a run is playing now (the run's `playing/` files). The
server answers /live.json ({"version": games stored, "playing": [games in progress]}) from memory
and adds one line to every HTML page it sends (`window.ARENA_LIVE`), so the index, games and bot
pages poll live.json: when a game was added they fetch their own page again and put its new parts
in place (filters, sorting and scroll stay), and games.html draws the games in progress; the files
on disk stay exactly what `arena publish` writes. Bound to the loopback interface only: a results
site is published by copying the directory, not by exposing this server.
"""
from __future__ import annotations

import json
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TextIO

from arena.site import model
from arena.site.build import SiteBuilder, SiteError, check_out, default_out
from arena.tournament.store import DB_NAME

HOST = "127.0.0.1"
DEFAULT_PORT = 8000
POLL_S = 1.0
"""How often the watcher looks at the database (seconds; `arena serve --poll S`)."""
PAGE_POLL_MS = 1500
"""How often a served page asks live.json whether a game was added (milliseconds), at POLL_S: with
another poll, the same 1.5 times it."""


class LiveSite:
    """The builder plus what the server needs: a version that changes when the site did."""

    def __init__(self, builder: SiteBuilder, log: TextIO | None = sys.stderr, poll_s: float = POLL_S) -> None:
        self.builder = builder
        self.log = log
        self.poll_s = poll_s
        self.page_poll_ms = round(PAGE_POLL_MS * poll_s / POLL_S)
        """How often the served pages ask live.json (milliseconds)."""
        self.version = 0
        self.playing: list[dict] = []
        """The games in progress (model.playing_game), the last stored games left out."""
        self._seen: dict[Path, tuple] = {}
        self._stamp: tuple = ()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _db_stamp(self) -> tuple:
        db = self.builder.results_dir / DB_NAME
        out = []
        for path in (db, db.with_name(DB_NAME + "-wal")):
            try:
                s = path.stat()
                out.append((s.st_mtime_ns, s.st_size))
            except OSError:
                out.append(None)
        return tuple(out)

    def refresh(self) -> bool:
        """Rebuild if the database changed since the last build; True if the site changed. The
        games in progress are read again either way."""
        with self._lock:
            self._read_playing()
            stamp = self._db_stamp()
            if stamp == self._stamp:
                return False
            try:
                self.builder.build()
            except Exception as exc:  # a database caught mid-write, a bad record: keep serving, retry
                if self.log is not None:
                    print(f"arena serve: warning: could not rebuild the site ({type(exc).__name__}: {exc})",
                          file=self.log)
                return False
            self._stamp = stamp
            changed = self.builder.games_count != self.version
            self.version = self.builder.games_count
            return changed

    def _read_playing(self) -> None:
        """Read the files of the games in progress that changed (each is rewritten after a move)."""
        seen: dict[Path, tuple] = {}
        playing = []
        for path in model.playing_files(self.builder.results_dir):
            try:
                s = path.stat()
            except OSError:
                continue
            stamp = (s.st_mtime_ns, s.st_size)
            old = self._seen.get(path)
            game = old[1] if old is not None and old[0] == stamp else model.playing_game(path)
            if game is not None:
                seen[path] = (stamp, game)
                playing.append(game)
        self._seen = seen
        self.playing = playing

    def state(self) -> dict:
        """What /live.json answers."""
        return {"version": self.version, "playing": self.playing}

    def start_watching(self) -> None:
        def loop() -> None:
            while not self._stop.wait(self.poll_s):
                self.refresh()

        self._thread = threading.Thread(target=loop, name="arena-site-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


class _Handler(SimpleHTTPRequestHandler):
    """Static files from the site directory, /live.json, and the live hook in HTML pages."""

    live: LiveSite

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path == "/live.json":
            self._send(json.dumps(self.live.state()).encode(), "application/json")
            return
        if path.endswith("/"):
            path += "index.html"
        if path.endswith(".html"):
            version = self.live.version  # before the read: the page is at least this new
            file = Path(self.translate_path(path))
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                super().do_GET()
                return
            live = json.dumps({"poll_ms": self.live.page_poll_ms, "version": version})
            hook = f"<script>window.ARENA_LIVE = {live};</script>\n</head>"
            self._send(text.replace("</head>", hook, 1).encode("utf-8"), "text/html; charset=utf-8")
            return
        super().do_GET()

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")  # a page reloaded for a new game must be the new one
        super().end_headers()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (http.server's signature)
        pass  # one line per request would bury the run's progress bar


class SiteServer:
    """The live site and its HTTP server; `start()` runs both in threads, `stop()` ends them."""

    def __init__(self, builder: SiteBuilder, port: int = DEFAULT_PORT,
                 log: TextIO | None = sys.stderr, poll_s: float = POLL_S) -> None:
        self.live = LiveSite(builder, log, poll_s)
        self.live.refresh()
        handler = type("Handler", (_Handler,), {"live": self.live})
        self.httpd = ThreadingHTTPServer((HOST, port), partial(handler, directory=str(builder.out)))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self) -> SiteServer:
        self.live.start_watching()
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="arena-site-http", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.live.stop()
        self.httpd.shutdown()
        self.httpd.server_close()


def open_server(results_dir: Path, out: str | Path | None = None, tournament_file: str | Path | None = None,
                fingerprint: dict | None = None, port: int | None = None,
                poll_s: float | None = None) -> SiteServer:
    """A started server of the site of `results_dir` (written to `out`, default results_dir/site/);
    `fingerprint` (the tournament file's) stands in until the first game is stored; `poll_s`: how
    often it looks for new games (default POLL_S). SiteError names a bad port, poll or directory."""
    port = DEFAULT_PORT if port is None else port
    if not 0 <= port <= 65535:
        raise SiteError(f"--port must be 0..65535, got {port}")
    poll_s = POLL_S if poll_s is None else poll_s
    if not 0.05 <= poll_s <= 3600:
        raise SiteError(f"--poll must be 0.05..3600 seconds, got {poll_s:g}")
    site = check_out(out if out is not None else default_out(results_dir), results_dir)
    builder = SiteBuilder(results_dir, site, tournament_file, fingerprint)
    try:
        return SiteServer(builder, port, poll_s=poll_s).start()
    except OSError as exc:
        raise SiteError(f"cannot serve on {HOST}:{port}: {exc.strerror or exc}") from None
