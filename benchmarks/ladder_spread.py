"""How evenly the course's ladder spreads games, and how fast its ratings settle.

Simulated play, no processes: a course of N students (each an active bot of known strength) and
the reference bots, `Ladder.due` asked every simulated minute (a fake clock), each game decided at
random by the strengths (P(a beats b) = 1 / (1 + exp(s_b - s_a))), `Ladder.record` updating the
openskill ratings. Printed for the ladder and, beside it, a baseline in the same run: the same
number of pairs each minute drawn uniformly at random (ratings by the same openskill model):

- the least and most games of an active bot over the last simulated hour (its share is
  `games_per_hour`), and over the whole run;
- games until the order is stable: the number of games played (all bots together) after which the
  students' order by ordinal keeps a Spearman correlation of at least 0.8 with their true order
  to the end of the run (and the correlation at the end).

    python benchmarks/ladder_spread.py [--students 30] [--hours 2] [--games-per-hour 6] [--seed 1]
"""
from __future__ import annotations

import argparse
import math
import random
import shlex
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from openskill.models import PlackettLuce  # noqa: E402

from arena.course.course import Course  # noqa: E402
from arena.course.season.ladder import Ladder  # noqa: E402
from arena.match.records import GameRecord  # noqa: E402

T0 = datetime(2026, 12, 1, tzinfo=UTC)
STEP = timedelta(minutes=1)
REFERENCE = {"random": -2.0, "greedy": 1.0, "alphabeta": 3.0}
STABLE_RHO = 0.8


def spearman(order: list[str], truth: dict[str, float]) -> float:
    """Spearman's rho between `order` (best first) and the order of `truth`'s strengths."""
    true_order = sorted(order, key=lambda b: -truth[b])
    n = len(order)
    rank = {b: i for i, b in enumerate(true_order)}
    return 1 - 6 * sum((rank[b] - i) ** 2 for i, b in enumerate(order)) / (n * (n * n - 1))


def winner(rng: random.Random, strength: dict[str, float], seat0: str, seat1: str) -> int:
    p0 = 1 / (1 + math.exp(strength[seat1] - strength[seat0]))
    return 0 if rng.random() < p0 else 1


def make_course(directory: Path, students: int, games_per_hour: float) -> Course:
    (directory / "course.toml").write_text(
        'game = "domineering"\ntime = 0.1\nupload_interval_s = 0\n[params]\nrows = 4\ncols = 4\n'
        f"[ladder]\ngames_per_hour = {games_per_hour}\nplacement_games = 4\n")
    (directory / "roster.csv").write_text("id,name,email,group\n" + "".join(
        f"s{n:02d},Student {n},,\n" for n in range(1, students + 1)))
    course = Course(directory, sandbox="off")
    for n in range(1, students + 1):
        sub = course.submit(f"s{n:02d}", "bot.py", b"print(1)\n", now=T0)
        course.store.set_command(sub.id, shlex.join([sys.executable, "-m", "bots", "random"]))
        course.store.finish(sub.id, "qualified")
    return course


def run_ladder(args: argparse.Namespace, strength: dict[str, float]) -> dict[str, object]:
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        ladder = Ladder(make_course(Path(tmp), args.students, args.games_per_hour))
        log: list[tuple[datetime, str, str]] = []
        pairs_per_step: list[int] = []
        rhos: list[tuple[int, float]] = []
        now = T0
        while now <= T0 + timedelta(hours=args.hours):
            specs = ladder.due(now)
            pairs_per_step.append(len(specs))
            for spec in specs:
                records = []
                for number in spec.game_numbers:
                    seats = [b.name for b in spec.seats(number)]
                    records.append(GameRecord(game_id=spec.game_id(number), game=spec.game,
                                              params=spec.params, players=seats, time_control="0.1",
                                              winner=winner(rng, strength, *seats)))
                ladder.record(records, now)
                log.append((now, spec.bots[0].name, spec.bots[1].name))
            students = [r.bot for r in ladder.table(now) if r.student_id]
            rhos.append((2 * len(log), spearman(students, strength)))
            now += STEP
    return summary(log, rhos, now - STEP, strength) | {"pairs_per_step": pairs_per_step}


def run_random(args: argparse.Namespace, strength: dict[str, float],
               pairs_per_step: list[int]) -> dict[str, object]:
    """The baseline: as many pairs each minute as the ladder played, drawn uniformly at random."""
    rng = random.Random(args.seed)
    model = PlackettLuce()
    ratings = {b: model.rating() for b in strength}
    bots = sorted(strength)
    log: list[tuple[datetime, str, str]] = []
    rhos: list[tuple[int, float]] = []
    now = T0
    for pairs in pairs_per_step:
        for _ in range(pairs):
            a, b = rng.sample(bots, 2)
            for seats in ((a, b), (b, a)):
                won = winner(rng, strength, *seats)
                teams = [[ratings[seats[0]]], [ratings[seats[1]]]]
                [[r0], [r1]] = model.rate(teams, ranks=[won, 1 - won])
                ratings[seats[0]], ratings[seats[1]] = r0, r1
            log.append((now, a, b))
        students = sorted((b for b in bots if b not in REFERENCE), key=lambda b: -ratings[b].ordinal())
        rhos.append((2 * len(log), spearman(students, strength)))
        now += STEP
    return summary(log, rhos, now - STEP, strength)


def summary(log: list[tuple[datetime, str, str]], rhos: list[tuple[int, float]], end: datetime,
            strength: dict[str, float]) -> dict[str, object]:
    students = [b for b in strength if b not in REFERENCE]
    last_hour = {b: 0 for b in students}
    total = {b: 0 for b in students}
    for when, a, b in log:
        for name in (a, b):
            if name in total:
                total[name] += 2
                if when > end - timedelta(hours=1):
                    last_hour[name] += 2
    stable = next((games for n, (games, _) in enumerate(rhos)
                   if all(rho >= STABLE_RHO for _, rho in rhos[n:])), None)
    return {"games": 2 * len(log), "hour_min": min(last_hour.values()), "hour_max": max(last_hour.values()),
            "all_min": min(total.values()), "all_max": max(total.values()), "stable_after": stable,
            "rho_end": rhos[-1][1] if rhos else float("nan")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--games-per-hour", type=float, default=6.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    strength = dict(REFERENCE)
    for n in range(1, args.students + 1):
        strength[f"s{n:02d}-v1"] = rng.uniform(-3.0, 4.0)
    ladder = run_ladder(args, strength)
    baseline = run_random(args, strength, ladder["pairs_per_step"])  # type: ignore[arg-type]
    print(f"{args.students} students + {len(REFERENCE)} reference bots, {args.hours:g} simulated hours, "
          f"games_per_hour = {args.games_per_hour:g} (each pair of games both seats), seed {args.seed}")
    print(f"{'':28}{'ladder':>12}{'random pairs':>14}")
    rows = [("games played", "games"), ("last hour: least games", "hour_min"),
            ("last hour: most games", "hour_max"), ("whole run: least games", "all_min"),
            ("whole run: most games", "all_max"), (f"games until rho >= {STABLE_RHO} stays", "stable_after"),
            ("Spearman rho at the end", "rho_end")]
    for label, key in rows:
        values = []
        for result in (ladder, baseline):
            value = result[key]
            shown = f"{value:.2f}" if isinstance(value, float) else str(value)
            values.append("never" if value is None else shown)
        print(f"{label:28}{values[0]:>12}{values[1]:>14}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
