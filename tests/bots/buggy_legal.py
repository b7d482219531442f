"""A bot whose move generator has a planted bug: its answer to the `legal` request forgets the
dominoes of column A (Domineering). It plays the first legal move. Read by test_legal_check and
test_course_phases."""
from bots.sdk import Bot


class Buggy(Bot):
    name = "buggy"

    def choose(self, state, time_left):
        return self.legal[0]

    def legal_moves(self, state):  # forgets the dominoes of column A
        return [move for move in state.legal_moves() if not move.endswith("A")]


if __name__ == "__main__":
    Buggy().run()
