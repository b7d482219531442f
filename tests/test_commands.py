"""Bot command lines read the way interpreters read them: the value after -cp, -jar, -m... is not
taken for a script; every relative path in them is made absolute; a missing one is refused, named."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from conftest import require

from arena.cell.launcher import LaunchError, display_name, resolve_command
from arena.tournament import runner


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("bot.jar", "lib/jeromq.jar", "lib/msgpack.jar", "bot.py", "bot.exe", "weights.bin"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "classes").mkdir()
    return tmp_path


def needs(program: str) -> None:
    require(shutil.which(program) is not None,
            f"{program} is not installed (apt-get install default-jdk mono-mcs)")


def test_every_class_path_entry_is_made_absolute_and_the_main_class_is_no_file(project):
    needs("java")
    cp = os.pathsep.join(["classes", "lib/jeromq.jar", "lib/*", "/usr/share"])
    argv = resolve_command(f"java -Xmx256m -cp {cp} Bot weights.bin", project)
    entries = [str(project / "classes"), str(project / "lib/jeromq.jar"), str(project / "lib/*"),
               "/usr/share"]
    assert argv == ("java", "-Xmx256m", "-cp", os.pathsep.join(entries), "Bot", str(project / "weights.bin"))
    assert resolve_command(["java", f"--class-path={cp}", "Bot"], project)[1] == \
        "--class-path=" + os.pathsep.join(entries)
    assert display_name(f"java -cp {cp} Bot") == "Bot"


def test_a_missing_class_path_entry_or_jar_is_refused_naming_it(project):
    needs("java")
    with pytest.raises(LaunchError, match=r"no class path entry 'lib/gone\.jar' \(looked for "):
        resolve_command(f"java -cp classes{os.pathsep}lib/gone.jar Bot", project)
    with pytest.raises(LaunchError, match=r"no class path entry 'nodir/\*'"):
        resolve_command("java -cp nodir/* Bot", project)
    with pytest.raises(LaunchError, match="no file 'other.jar'"):
        resolve_command("java -jar other.jar", project)
    with pytest.raises(LaunchError, match="option -cp needs a value"):
        resolve_command("java -cp", project)


def test_java_jar_is_made_absolute_and_names_the_bot(project):
    needs("java")
    assert resolve_command("java -jar bot.jar --fast", project) == ("java", "-jar", str(project / "bot.jar"),
                                                                    "--fast")
    assert display_name("java -jar bot.jar") == "bot"


def test_python_module_and_code_are_not_files_but_a_script_must_exist(project):
    python = sys.executable
    assert resolve_command([python, "-m", "bots", "random"], project) == (python, "-m", "bots", "random")
    argv = resolve_command([python, "-c", "print(1)", "bot.py"], project)
    assert argv[2:] == ("print(1)", str(project / "bot.py"))  # -c's arguments are plain arguments
    assert resolve_command([python, "-u", "-X", "dev", "bot.py"], project)[-1] == str(project / "bot.py")
    assert display_name("python -m bots.random_player") == "random_player"
    with pytest.raises(LaunchError, match=r"no file 'gone\.py'"):
        resolve_command([python, "-u", "gone.py"], project)
    with pytest.raises(LaunchError, match=r"no file 'gone'"):  # any script, whatever its suffix
        resolve_command([python, "gone"], project)


def test_mono_runs_an_exe_whose_path_is_made_absolute(project):
    needs("mono")
    assert resolve_command("mono bot.exe", project) == ("mono", str(project / "bot.exe"))
    assert display_name("stdio:mono bot.exe") == "bot"
    with pytest.raises(LaunchError, match="no file 'gone.exe'"):
        resolve_command("mono gone.exe", project)


def test_a_tournament_file_reads_class_paths_against_its_directory_and_refuses_a_missing_entry(project,
                                                                                             monkeypatch):
    needs("java")
    monkeypatch.chdir("/")
    path = project / "t.toml"
    path.write_text(f'game = "domineering"\n[[bots]]\nname = "a"\ncommand = "random"\n'
                    f'[[bots]]\nname = "j"\ncommand = "java -cp classes{os.pathsep}lib/msgpack.jar Bot"\n')
    tour = runner.load(path)
    assert tour.bots[1].argv[2] == os.pathsep.join([str(project / "classes"),
                                                    str(project / "lib/msgpack.jar")])
    path.write_text(path.read_text().replace("lib/msgpack.jar", "lib/missing.jar"))
    with pytest.raises(runner.TournamentError,
                       match=r"bots\[2\]\.command: .*no class path entry 'lib/missing\.jar'"):
        runner.load(path)


def test_a_relative_folder_argument_is_made_absolute(project):
    (project / "engine").mkdir()
    assert resolve_command("python3 bot.py engine . ..", project)[2:] == (str(project / "engine"), ".", "..")


ENGINE_BOT = '''import sys
sys.path.insert(0, sys.argv[1])  # the engine's checkout, named on the command line
from brain import first_move
from bots.sdk import Bot


class Wrapped(Bot):
    name = "wrapped"

    def choose(self, state, time_left):
        return first_move(self.legal)


if __name__ == "__main__":
    Wrapped().run()
'''


def test_a_bot_given_its_engines_folder_relatively_plays_in_the_sandbox(tmp_path):
    """`arena match GAME "python3 bot.py engine" random` run where engine/ lies: the folder is named
    absolutely and shown to the sandboxed bot, which imports from it (it crashed with
    ModuleNotFoundError: the relative word meant nothing in the bot's own working directory)."""
    from conftest import run_arena

    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "brain.py").write_text("def first_move(legal):\n    return legal[0]\n")
    (tmp_path / "bot.py").write_text(ENGINE_BOT)
    done = run_arena("match", "domineering", f"{sys.executable} bot.py engine", "random", "--games", "2",
                     "--time", "2", "-p", "rows=4", "-p", "cols=4", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert "forfeit" not in done.stdout and "ModuleNotFoundError" not in said, said
