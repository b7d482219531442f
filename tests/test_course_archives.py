"""What an upload may be (arena/course/season/archives.py): unsafe archives are refused with a message a
student understands, before anything is stored or unpacked; good ones unpack as the kits lay out."""
from __future__ import annotations

import io
import stat
import tarfile
import zipfile

import pytest

from arena.course.season import archives
from arena.course.season.archives import Refused

BUILD = b"#!/bin/sh\necho ./bot\n"


def zip_of(*members: tuple[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def refused(filename: str, data: bytes, protocol: str = "v1") -> str:
    with pytest.raises(Refused) as caught:
        archives.kind_of(filename, data, protocol)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_single_files_and_kit_archives_are_taken_as_what_they_are(tmp_path):
    assert archives.kind_of("bot.py", b"print(1)\n") == "python"
    assert archives.kind_of("bot.py", b"print(1)\n", "stdio") == "stdio"
    kit = zip_of(("kit/build.sh", BUILD), ("kit/src/bot.c", b"int main(){}"), ("kit/", b""))
    assert archives.kind_of("kit.zip", kit) == "archive"
    assert [m.path for m in archives.members("kit.zip", kit) if not m.is_dir] == ["build.sh", "src/bot.c"]
    archives.unpack("kit.zip", kit, tmp_path / "b")
    assert (tmp_path / "b" / "build.sh").read_bytes() == BUILD
    assert (tmp_path / "b" / "build.sh").stat().st_mode & 0o111  # always executable
    assert (tmp_path / "b" / "src" / "bot.c").read_bytes() == b"int main(){}"


@pytest.mark.parametrize(("name", "expected"), [
    ("../x", "unsafe path '../x' in the archive"),
    ("a/../../x", "unsafe path 'a/../../x'"),
    ("/etc/cron.d/x", "unsafe path '/etc/cron.d/x' in the archive (an absolute path)"),
    ("a\\..\\x", "unsafe path"),
])
def test_a_zip_with_a_path_leaving_its_folder_is_refused(name, expected):
    assert expected in refused("kit.zip", zip_of(("build.sh", BUILD), (name, b"x")))


def test_a_zip_holding_a_symbolic_link_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("build.sh", BUILD)
        link = zipfile.ZipInfo("secret")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    assert "'secret' in the archive is a symbolic link" in refused("kit.zip", buffer.getvalue())


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE, tarfile.FIFOTYPE])
def test_a_tar_holding_a_link_or_a_device_is_refused(kind):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("build.sh")
        info.size = len(BUILD)
        archive.addfile(info, io.BytesIO(BUILD))
        special = tarfile.TarInfo("odd")
        special.type = kind
        special.linkname = "/etc/shadow"
        archive.addfile(special)
    message = refused("kit.tar.gz", buffer.getvalue())
    assert "'odd' in the archive" in message
    assert ("link" in message) == (kind in (tarfile.SYMTYPE, tarfile.LNKTYPE))


def test_a_zip_bomb_is_refused_from_its_headers():
    bomb = zip_of(("build.sh", BUILD), ("zeros", b"\0" * (archives.MAX_UNPACKED_BYTES + 1)),
                  compression=zipfile.ZIP_DEFLATED)
    assert len(bomb) < 1_000_000  # a small upload...
    assert refused("bomb.zip", bomb) == "the archive unpacks to more than 100.0 MB; that is the limit"


def test_a_zip_bomb_lying_in_its_headers_is_caught_while_unpacking(tmp_path):
    real = b"\0" * 5_000_000
    data = bytearray(zip_of(("build.sh", BUILD), ("zeros", real), compression=zipfile.ZIP_DEFLATED))
    # the sizes the headers claim for "zeros" (local header and central directory): 1000 bytes
    for where in (data.find(b"PK\x03\x04", 1), data.rfind(b"PK\x01\x02")):
        offset = where + (22 if data[where + 2] == 3 else 24)
        data[offset:offset + 4] = (1000).to_bytes(4, "little")
    assert [m.size for m in archives.members("bomb.zip", bytes(data)) if m.path == "zeros"] == [1000]
    with pytest.raises(Refused) as caught:
        archives.unpack("bomb.zip", bytes(data), tmp_path / "b")
    assert "'zeros'" in str(caught.value)
    assert not (tmp_path / "b" / "zeros").exists() or (tmp_path / "b" / "zeros").stat().st_size <= 1000


def test_a_tar_gz_bomb_is_refused_before_it_is_all_unpacked(monkeypatch):
    monkeypatch.setattr(archives, "MAX_UNPACKED_BYTES", 10_000_000)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for n in range(3):  # 3 x 6 MB of zeros: 18 MB, in a few tens of kB
            info = tarfile.TarInfo(f"zeros{n}")
            info.size = 6_000_000
            archive.addfile(info, io.BytesIO(bytes(info.size)))
        info = tarfile.TarInfo("build.sh")
        info.size = len(BUILD)
        archive.addfile(info, io.BytesIO(BUILD))
    assert len(buffer.getvalue()) < 100_000
    message = refused("bomb.tgz", buffer.getvalue())
    assert message == "the archive unpacks to more than 10.0 MB; that is the limit"


def test_too_many_members_are_refused():
    many = zip_of(("build.sh", BUILD), *((f"f{i}", b"") for i in range(archives.MAX_MEMBERS)))
    assert refused("many.zip", many) == f"the archive holds more than {archives.MAX_MEMBERS} files and " \
                                        "folders; that is the limit"


@pytest.mark.parametrize(("filename", "data", "expected"), [
    ("kit.zip", zip_of(("bot.cpp", b"int main(){}"),), "no build.sh at the top of the archive"),
    ("kit.zip", zip_of(("a/build.sh", BUILD), ("b/x", b"")), "no build.sh at the top of the archive"),
    ("kit.zip", b"not a zip at all", "kit.zip is not a readable zip archive"),
    ("kit.tar", b"not a tar at all", "kit.tar is not a readable tar archive"),
    ("bot.exe", b"MZ", "bot.exe: upload one .py file, or a .zip or .tar(.gz) archive"),
    ("bot.py", b"", "bot.py is empty"),
    ("bot.py", b"\xff\xfe\x00", "bot.py is not UTF-8 text"),
])
def test_wrong_layouts_and_unreadable_uploads_are_refused_by_name(filename, data, expected):
    assert expected in refused(filename, data)


def test_an_unknown_protocol_is_refused():
    assert refused("bot.py", b"print(1)", "v2").startswith("unknown protocol 'v2'")


def test_an_archive_is_shown_member_by_member_binary_ones_by_size():
    kit = zip_of(("build.sh", BUILD), ("bot", b"\x7fELF\0\0"), ("bot.c", b"int main(){}"))
    shown = dict(archives.shown_files("kit.zip", kit, "archive"))
    assert shown == {"build.sh": BUILD.decode(), "bot": "(binary file, 6 bytes)", "bot.c": "int main(){}"}
