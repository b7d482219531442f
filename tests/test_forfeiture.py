"""The typed forfeit (arena/match/records.py: Forfeiture): to_dict/from_dict keep a record's JSON
and the results database byte for byte, and GameRecord.forfeit_of(seat) says which seat forfeited
and why, from real games: a bot that crashes, and two that cannot start."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arena.cell.limits import Limits
from arena.match.clock import TimeControl
from arena.match.records import Forfeit, Forfeiture, GameRecord
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec

BROKEN = Path(__file__).resolve().parent / "bots" / "broken.py"
RANDOM = BotSpec("random", (sys.executable, "-m", "bots", "random"))


@pytest.mark.parametrize("written", [
    {"seat": 1, "reason": "timeout", "detail": "0.4 s a move; it took 0.9 s"},
    {"seat": 0, "reason": "timeout", "detail": "late", "under_load": True},
    {"seat": None, "reason": "double_forfeit", "detail": "seat 0 crashed: x; seat 1 no_hello: y",
     "both": [{"seat": 0, "reason": "crashed", "detail": "x"},
              {"seat": 1, "reason": "no_hello", "detail": "y"}]},
    {"seat": None, "reason": "double_forfeit", "detail": "both failed", "both": []},
])
def test_a_forfeit_goes_to_its_typed_value_and_back_key_for_key(written):
    typed = Forfeiture.from_dict(written)
    assert typed.to_dict() == written and list(typed.to_dict()) == list(written)
    assert isinstance(typed.reason, Forfeit)


def test_an_unknown_reason_stays_the_string_it_was():
    typed = Forfeiture.from_dict({"seat": 0, "reason": "eaten_by_a_grue", "detail": ""})
    assert typed.reason == "eaten_by_a_grue" and typed.to_dict()["reason"] == "eaten_by_a_grue"


def spec(match_id: str, first: BotSpec, second: BotSpec) -> MatchSpec:
    return MatchSpec(match_id, "domineering", (first, second), TimeControl(per_move=2.0), (0,),
                     params={"rows": 5, "cols": 5}, limits=Limits(sandbox="off"))


def test_which_seat_forfeited_and_why_in_a_real_game():
    crasher = BotSpec("crasher", (sys.executable, str(BROKEN), "crash"))
    [record] = run_match(spec("crash", crasher, RANDOM))
    typed = record.forfeiture
    assert typed is not None and (typed.seat, typed.reason) == (0, Forfeit.CRASHED), record.forfeit
    assert record.forfeit_of(0) == typed and record.forfeit_of(1) is None
    assert typed.to_dict() == record.forfeit  # the record's JSON form is the typed value's
    again = GameRecord.from_json(record.to_json())
    assert again.to_json() == record.to_json() and again.forfeiture == typed


def test_a_double_forfeit_names_each_seat_and_why(tmp_path):
    nothing = [BotSpec(f"nothing{n}", (str(tmp_path / f"missing{n}"),)) for n in range(2)]
    [record] = run_match(spec("double", *nothing), startup_timeout_s=5)
    typed = record.forfeiture
    assert record.is_double_forfeit() and typed is not None and typed.seat is None
    assert [side.seat for side in typed.sides()] == [0, 1]
    assert record.forfeit_of(0) is not None and record.forfeit_of(0).seat == 0
    assert record.forfeit_of(1) is not None and record.forfeit_of(1).seat == 1
    assert record.points(0) == record.points(1) == 0.0
    assert typed.to_dict() == record.forfeit
