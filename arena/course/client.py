"""`arena course submit URL FILE --token TOKEN [--wait] [--report FILE --phase NAME]` and `arena
course report URL FILE --phase NAME`: a student's upload and report from the terminal.

Standard library only (urllib), so a student needs nothing but arena itself. It posts the file to
the server's JSON API (`POST /api/submissions`, `Authorization: Bearer TOKEN`) and, with `wait`,
polls `GET /api/submissions/ID` until the submission has its final status. The token goes to the
URL's own origin only: a redirect elsewhere is refused, not followed, and a plain http:// URL is
refused before any connection unless it names this machine (or `insecure_http`).
"""
from __future__ import annotations

import ipaddress
import json
import os
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

TOKEN_ENV = "ARENA_COURSE_TOKEN"
"""Where the token is read from without --token (it then stays out of the shell's history)."""
POLL_S = 1.0
"""How often --wait asks for the status (seconds)."""
REQUEST_TIMEOUT_S = 60.0
EXIT_QUALIFIED, EXIT_NOT_QUALIFIED, EXIT_REFUSED = 0, 1, 2
FINAL = ("qualified", "failed")


class SubmitError(ValueError):
    """The upload was refused or could not be made: one line naming why."""


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of `url`, the port made explicit: what a token may be sent to."""
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), port or default


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine without a lookup: localhost, 127.0.0.0/8 or ::1."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str, insecure_http: bool = False) -> None:
    """SubmitError unless `url` is https://, or http:// to this machine (or with `insecure_http`):
    checked before any name is looked up or any connection made."""
    scheme, host, _ = origin(url)
    if scheme not in ("http", "https") or not host:
        raise SubmitError(f"{url}: not a server's address: give https://HOST (or http://127.0.0.1:PORT)")
    if scheme == "http" and not is_loopback(host) and not insecure_http:
        raise SubmitError(f"{url}: plain http:// would send your token unencrypted to {host}: use https://, "
                          "or --insecure-http if you really mean it")


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only within the origin the token was meant for; any other is refused."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001, ANN201 (urllib's)
        target = urllib.parse.urljoin(req.full_url, newurl)
        if origin(target) != origin(req.full_url):
            raise SubmitError(f"{req.full_url}: the server redirected to {target}, another origin: not "
                              "followed (your token goes to the URL you gave only)")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


OPENER = urllib.request.build_opener(_SameOrigin)
""""urlopen" with cross-origin redirects refused."""


def _request(url: str, token: str, data: bytes | None = None, content_type: str = "") -> dict[str, Any]:
    """The JSON answer of one API call; SubmitError with the server's own message for a refusal."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    method = "POST" if data is not None else "GET"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with OPENER.open(request, timeout=REQUEST_TIMEOUT_S) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read().decode("utf-8")).get("error") or exc.reason
        except (ValueError, AttributeError):
            message = exc.reason
        raise SubmitError(f"{url}: {exc.code}: {message}") from None
    except urllib.error.URLError as exc:
        raise SubmitError(f"cannot reach {url}: {exc.reason}") from None
    except SubmitError:  # a redirect refused (_SameOrigin)
        raise
    except (OSError, ValueError) as exc:
        raise SubmitError(f"{url}: {exc}") from None


def multipart(fields: dict[str, str], filename: str, data: bytes, part: str = "file") -> tuple[bytes, str]:
    """A multipart/form-data body with `fields` and one file part named `part`; (body, content type)."""
    boundary = "arena-" + secrets.token_hex(16)
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                     f"{value}\r\n".encode())
    quoted = filename.replace("\\", "_").replace('"', "_").replace("\r", "_").replace("\n", "_")
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{part}"; filename="{quoted}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def describe(s: dict[str, Any]) -> str:
    """One line for a submission's status: "version 3: failed (crashed): ZeroDivisionError: ..."."""
    line = f"version {s.get('version')}: {s.get('status')}"
    if s.get("reason"):
        line += f" ({s['reason']})"
    if s.get("status") == "failed" and s.get("last_line"):
        line += f": {s['last_line']}"
    return line


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SubmitError(f"cannot read {path}: {exc.strerror or exc}") from None


def report(url: str, path: str | Path, token: str, phase: str, say: Callable[[str], None] = print,
           insecure_http: bool = False) -> int:
    """Hand in `path` (.pdf or .md) as the token's student's report for `phase`, on its own (the
    code and the ladder are not touched); the phase judges the latest one handed in before its
    deadline. 0 once stored; SubmitError for a refusal (the server's one line), a bad file or URL."""
    check_url(url, insecure_http)
    path = Path(path)
    data = _read(path)
    base = url.rstrip("/")
    body, content_type = multipart({"phase": phase}, path.name, data, part="report")
    r = _request(f"{base}/api/reports", token, body, content_type)
    say(f"handed in {r['filename']} ({r['size']:,} bytes) as your report for {phase!r}: the phase judges "
        f"the latest before its deadline; see {base}/me/season")
    return EXIT_QUALIFIED


def submit(url: str, path: str | Path, token: str, protocol: str = "v1", wait: bool = False,
           timeout_s: float | None = None, say: Callable[[str], None] = print,
           poll_s: float = POLL_S, insecure_http: bool = False,
           report_path: str | Path | None = None, phase: str | None = None) -> int:
    """Upload `path` to the course server at `url` as the token's student (and, with
    `report_path`, hand that in as the report for `phase` right after: `report`). Without `wait`,
    0 once stored; with it, the final status is printed and the exit code is 0 only for qualified
    (1 for failed, or still unfinished after `timeout_s`). SubmitError for a refusal, a bad file,
    or a URL the token may not go to (check_url)."""
    check_url(url, insecure_http)
    if (report_path is None) != (phase is None):
        raise SubmitError("--report FILE and --phase NAME go together: the report is handed in for that "
                          "phase")
    path = Path(path)
    data = _read(path)
    if report_path is not None:
        _read(Path(report_path))  # a report that cannot be read stops everything before the upload
    base = url.rstrip("/")
    body, content_type = multipart({"protocol": protocol}, path.name, data)
    s = _request(f"{base}/api/submissions", token, body, content_type)
    say(f"stored {path.name} as version {s['version']} (submission {s['id']}): {s['status']}; "
        f"see {base}/submissions/{s['id']}")
    if report_path is not None:
        report(url, report_path, token, phase or "", say, insecure_http)
    if not wait:
        return EXIT_QUALIFIED
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while not s.get("finished"):
        if deadline is not None and time.monotonic() > deadline:
            say(f"still {s.get('status')} after {timeout_s:g} s; see {base}/submissions/{s['id']}")
            return EXIT_NOT_QUALIFIED
        time.sleep(poll_s)
        s = _request(f"{base}/api/submissions/{s['id']}", token)
    say(describe(s))
    return EXIT_QUALIFIED if s.get("status") == "qualified" else EXIT_NOT_QUALIFIED


def token_from(given: str | None, environ: dict[str, str] | None = None) -> str:
    """The token given on the command line, else $ARENA_COURSE_TOKEN; SubmitError without either."""
    token = given or (environ if environ is not None else os.environ).get(TOKEN_ENV, "")
    if not token.strip():
        raise SubmitError(f"no API token: give --token TOKEN or set {TOKEN_ENV} (staff issue tokens with "
                          "`arena course token DIR ID`)")
    return token.strip()

