"""`[privacy]`: what public pages call a student (issue 25).

With `pseudonyms = true` public standings (the final's site, the ladder's pages) name each student
by a pseudonym of this course: an adjective-animal pair ("brave-otter"), picked from a hash of the
student id and a secret of the course (so no one can work the pseudonyms out from the ids), kept
in course.db (table `pseudonyms`) the first time it is used, so it never changes and no two
students share one. The student sees its own name; staff always see names. Without it public
pages show the roster's names.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.course.course import Course

ADJECTIVES = (
    "agile", "amber", "bold", "brave", "bright", "brisk", "calm", "clever", "cosmic", "crimson", "daring",
    "deft", "eager", "fierce", "gentle", "golden", "grand", "happy", "hardy", "jolly", "keen", "lively",
    "lucky", "merry", "mighty", "misty", "nimble", "noble", "placid", "plucky", "proud", "quick", "quiet",
    "rapid", "rustic", "sage", "scarlet", "serene", "shy", "silent", "silver", "sleek", "snowy", "solar",
    "spry", "steady", "stormy", "sunny", "swift", "tidy", "valiant", "vivid", "wild", "wise", "witty",
    "zesty", "azure", "cheery", "dapper", "frosty", "jade", "lunar", "mellow", "polar")
ANIMALS = (
    "badger", "bat", "bear", "beaver", "bison", "boar", "camel", "cat", "cobra", "crane", "crow", "deer",
    "dingo", "dolphin", "eagle", "elk", "falcon", "ferret", "finch", "fox", "gecko", "gibbon", "goose",
    "hare", "hawk", "heron", "ibex", "ibis", "jackal", "jaguar", "koala", "lemur", "lynx", "magpie",
    "marten", "mole", "moose", "newt", "ocelot", "orca", "otter", "owl", "panda", "panther", "puffin",
    "quail", "raven", "robin", "seal", "shrew", "sloth", "stoat", "swan", "tapir", "tiger", "toad",
    "trout", "turtle", "viper", "walrus", "weasel", "whale", "wolf", "yak")


def pseudonym(course: Course, student_id: str) -> str:
    """The student's pseudonym in this course: made once, then kept (course.db)."""
    store = course.store
    conn = store.connection()
    found = conn.execute("SELECT name FROM pseudonyms WHERE student_id = ?", (student_id,)).fetchone()
    if found is not None:
        return str(found[0])
    with store.write() as db:
        row = db.execute("SELECT secret FROM privacy_secret WHERE id = 1").fetchone()
        if row is None:
            secret = secrets.token_hex(16)
            db.execute("INSERT INTO privacy_secret (id, secret) VALUES (1, ?)", (secret,))
        else:
            secret = row[0]
        found = db.execute("SELECT name FROM pseudonyms WHERE student_id = ?", (student_id,)).fetchone()
        if found is not None:  # another thread made it meanwhile
            return str(found[0])
        taken = {r[0] for r in db.execute("SELECT name FROM pseudonyms")}
        for attempt in range(10_000):
            digest = hmac.new(secret.encode(), f"{student_id}/{attempt}".encode(), hashlib.sha256).digest()
            name = (f"{ADJECTIVES[digest[0] % len(ADJECTIVES)]}-{ANIMALS[digest[1] % len(ANIMALS)]}"
                    + (f"-{attempt // 64 + 2}" if attempt >= 64 else ""))
            if name not in taken:
                break
        db.execute("INSERT INTO pseudonyms (student_id, name) VALUES (?, ?)", (student_id, name))
    return name


def public_name(course: Course, student_id: str) -> str:
    """What a public page (one for no one in particular) calls the student: its pseudonym when
    they are on, else its id (a name fit for a tournament's bot and a file name)."""
    return pseudonym(course, student_id) if course.config.privacy.pseudonyms else student_id


def display_name(course: Course, student_id: str, viewer: str | None, staff: bool) -> str:
    """What `viewer` (a student id, or None for the public) sees as the student's name: staff and
    the student itself its roster name; others its pseudonym when `[privacy] pseudonyms = true`,
    else its roster name. An id not in the roster (a reference bot) is shown as it is."""
    student = course.student(student_id)
    if student is None:
        return student_id
    if staff or viewer == student_id or not course.config.privacy.pseudonyms:
        return student.name
    return pseudonym(course, student_id)


def display_names(course: Course, viewer: str | None, staff: bool) -> dict[str, str]:
    """Every roster student's id -> `display_name` for `viewer`, in one pass (a page naming 300
    students asked the database 600 times, one student at a time)."""
    students = course.students()
    if staff or not course.config.privacy.pseudonyms:
        return {s.id: s.name for s in students}
    named = pseudonyms(course, [s.id for s in students if s.id != viewer])
    return {s.id: named.get(s.id, s.name) for s in students}


def pseudonyms(course: Course, student_ids: list[str]) -> dict[str, str]:
    """`pseudonym` of each of `student_ids`, read in one query (made for those without one yet)."""
    kept = dict(course.store.rows("SELECT student_id, name FROM pseudonyms"))
    return {sid: kept.get(sid) or pseudonym(course, sid) for sid in student_ids}
