"""``export --out FILE``: which files it refuses, replaces whole, or writes in place or through."""

from __future__ import annotations

import asyncio
import errno
import glob
import io
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import IO, Any

import pytest

from lionmem.cli import _transfer, main
from lionmem.cli._errors import CommandError
from tests.cli.conftest import SAMPLE
from tests.cli.support import LIONMEM, Result, clean_env, lionmem, one_line_error


@pytest.mark.parametrize("out", ["copy.db-wal", "copy.db-shm", "copy.db-journal", "link.db-wal"])
def test_export_refuses_the_journal_of_a_database_named_by_a_link(
    sample_copy: Path, out: str
) -> None:
    """``--db`` a symbolic link: SQLite's journal files sit beside the file it points to, and
    ``--out`` naming one of them (or the link's own name for it) is refused."""
    (sample_copy.parent / "link.db").symlink_to("copy.db")
    result = lionmem("export", "--db", "link.db", "--out", out, cwd=sample_copy.parent)
    assert one_line_error(result, "") == (
        f"lionmem export: --out {out} is the database file itself; write the export to another file"
    )
    assert sorted(path.name for path in sample_copy.parent.iterdir()) == ["copy.db", "link.db"]


def test_export_through_a_link_replaces_the_file_it_points_to_and_keeps_the_link(
    tmp_path: Path, sample_db: Path
) -> None:
    """A complete export through a symbolic link: the link stays, the file it points to (in
    another directory, with its own mode) holds the export, and no temporary file is left."""
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "target.jsonl"
    target.write_text("an earlier export\n", encoding="utf-8")
    target.chmod(0o640)
    (tmp_path / "link.jsonl").symlink_to(target)
    result = lionmem("export", "--db", sample_db, "--out", "link.jsonl", cwd=tmp_path)
    assert (result.status, result.stdout, result.stderr) == (
        0,
        "exported 3000 items to link.jsonl\n",
        "",
    )
    assert (tmp_path / "link.jsonl").readlink() == target
    assert target.read_bytes() == SAMPLE.read_bytes()
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(path.name for path in tmp_path.iterdir()) == ["link.jsonl", "real"]
    assert sorted(path.name for path in target.parent.iterdir()) == ["target.jsonl"]


def _without_privileges(*args: str | Path, cwd: Path) -> Result:
    """Run the console script as a user that file permissions apply to: root without the
    capabilities that override them (``setpriv``), anyone else as is."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip(
                "running as root, and setpriv is missing to drop the overriding capabilities"
            )
        overrides = "-dac_override,-dac_read_search,-fowner,-chown"
        prefix = ["setpriv", f"--bounding-set={overrides}", f"--inh-caps={overrides}", "--"]
    completed = subprocess.run(
        [*prefix, str(LIONMEM), *map(str, args)],
        capture_output=True,
        cwd=cwd,
        env=clean_env(),
        timeout=120,
        check=False,
    )
    return Result(
        completed.returncode, completed.stdout.decode("utf-8"), completed.stderr.decode("utf-8")
    )


def test_export_refuses_to_replace_a_read_only_file(tmp_path: Path, sample_db: Path) -> None:
    """An existing ``--out`` file its user may not write is refused, and kept as it was."""
    kept = tmp_path / "kept.jsonl"
    kept.write_text("read only\n", encoding="utf-8")
    kept.chmod(0o444)
    result = _without_privileges("export", "--db", sample_db, "--out", "kept.jsonl", cwd=tmp_path)
    assert one_line_error(result, "") == (
        "lionmem export: --out kept.jsonl: cannot write it (Permission denied)"
    )
    assert kept.read_text("utf-8") == "read only\n"
    assert kept.stat().st_mode & 0o777 == 0o444
    assert sorted(path.name for path in tmp_path.iterdir()) == ["kept.jsonl"]


def test_export_writes_in_place_a_file_it_cannot_replace(tmp_path: Path, sample_db: Path) -> None:
    """A writable ``--out`` file in a read-only directory, or another user's file in a sticky
    directory, cannot be renamed over: it is written in place, and keeps its owner and mode."""
    fixed, sticky = tmp_path / "fixed", tmp_path / "sticky"
    fixed.mkdir()
    sticky.mkdir()
    for folder, owner in ((fixed, os.geteuid()), (sticky, 65534)):
        (folder / "e.jsonl").write_text("an earlier export\n", encoding="utf-8")
        (folder / "e.jsonl").chmod(0o666)
        if owner != os.geteuid():
            if os.geteuid() != 0:
                continue  # another user's file needs root to make
            os.chown(folder / "e.jsonl", owner, -1)
            os.chown(folder, owner, -1)  # like /tmp: the directory is not the user's either
    fixed.chmod(0o555)
    sticky.chmod(0o1777)
    try:
        results = [
            _without_privileges("export", "--db", sample_db, "--out", "e.jsonl", cwd=folder)
            for folder in (fixed, sticky)
        ]
    finally:
        fixed.chmod(0o755)
    for folder, result in zip((fixed, sticky), results, strict=True):
        assert (result.status, result.stdout, result.stderr) == (
            0,
            "exported 3000 items to e.jsonl\n",
            "",
        )
        assert (folder / "e.jsonl").read_bytes() == SAMPLE.read_bytes()
        assert sorted(path.name for path in folder.iterdir()) == ["e.jsonl"]
    if os.geteuid() == 0:
        assert (sticky / "e.jsonl").stat().st_uid == 65534


def test_a_replaced_file_keeps_its_owner_and_group(tmp_path: Path, sample_db: Path) -> None:
    """Root replacing another user's file: the new file has that user and group, and the mode
    (set-group-ID bit included) of the old one."""
    if os.geteuid() != 0:
        pytest.skip("another user's file needs root to make")
    earlier = tmp_path / "e.jsonl"
    earlier.write_text("an earlier export\n", encoding="utf-8")
    os.chown(earlier, 65534, 65533)
    earlier.chmod(0o2640)
    inode = earlier.stat().st_ino
    result = lionmem("export", "--db", sample_db, "--out", "e.jsonl", cwd=tmp_path)
    assert (result.status, result.stdout, result.stderr) == (
        0,
        "exported 3000 items to e.jsonl\n",
        "",
    )
    replaced = earlier.stat()
    assert replaced.st_ino != inode  # a new file, renamed into place
    assert (replaced.st_uid, replaced.st_gid, stat.S_IMODE(replaced.st_mode)) == (
        65534,
        65533,
        0o2640,
    )
    assert earlier.read_bytes() == SAMPLE.read_bytes()
    assert [path.name for path in tmp_path.iterdir()] == ["e.jsonl"]


def test_a_file_whose_owner_cannot_be_kept_is_written_in_place(
    tmp_path: Path, sample_db: Path
) -> None:
    """Another user's file that this user may write: a new file could not have its owner, so
    it is written in place and keeps owner, group and mode."""
    if os.geteuid() != 0:
        pytest.skip("another user's file needs root to make")
    earlier = tmp_path / "e.jsonl"
    earlier.write_text("an earlier export\n", encoding="utf-8")
    os.chown(earlier, 65534, 65533)
    earlier.chmod(0o666)
    inode = earlier.stat().st_ino
    result = _without_privileges("export", "--db", sample_db, "--out", "e.jsonl", cwd=tmp_path)
    assert (result.status, result.stdout, result.stderr) == (
        0,
        "exported 3000 items to e.jsonl\n",
        "",
    )
    kept = earlier.stat()
    assert (kept.st_ino, kept.st_uid, kept.st_gid, stat.S_IMODE(kept.st_mode)) == (
        inode,
        65534,
        65533,
        0o666,
    )
    assert earlier.read_bytes() == SAMPLE.read_bytes()
    assert [path.name for path in tmp_path.iterdir()] == ["e.jsonl"]


@pytest.mark.parametrize("refusal", [errno.EINVAL, errno.ENOTSUP, errno.ENOSYS])
def test_a_file_whose_owner_is_outside_the_user_namespace_is_written_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusal: int
) -> None:
    """In a user namespace (or on NFSv4 with unmapped ids) chown refuses an owner outside the
    mapping with an error other than EPERM: the file is written in place, as for an owner a
    new file cannot have, and keeps owner, group, mode and inode."""
    if os.geteuid() != 0:
        pytest.skip("another user's file needs root to make")
    earlier = tmp_path / "e.jsonl"
    earlier.write_text("an earlier export\n", encoding="utf-8")
    os.chown(earlier, 1234, 1234)
    earlier.chmod(0o666)
    inode = earlier.stat().st_ino

    def refusing_fchown(descriptor: int, uid: int, gid: int) -> None:
        raise OSError(refusal, os.strerror(refusal))

    monkeypatch.setattr(os, "fchown", refusing_fchown)
    output = _transfer._open_output(str(earlier))
    assert output.partial is None
    output.stream.write(b"new\n")
    output.finish()
    kept = earlier.stat()
    assert (kept.st_ino, kept.st_uid, kept.st_gid, stat.S_IMODE(kept.st_mode)) == (
        inode,
        1234,
        1234,
        0o666,
    )
    assert earlier.read_text("utf-8") == "new\n"
    assert [path.name for path in tmp_path.iterdir()] == ["e.jsonl"]


@pytest.mark.parametrize("failure", [errno.EIO, errno.EDQUOT])
def test_a_chown_that_fails_otherwise_is_an_error_and_the_file_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: int
) -> None:
    """chown failing with an error other than a refused owner (an I/O error, a full quota) is
    reported: nothing is written, in place or beside the file."""
    if os.geteuid() != 0:
        pytest.skip("another user's file needs root to make")
    earlier = tmp_path / "e.jsonl"
    earlier.write_text("an earlier export\n", encoding="utf-8")
    os.chown(earlier, 65534, 65533)

    def failing_fchown(descriptor: int, uid: int, gid: int) -> None:
        raise OSError(failure, os.strerror(failure))

    monkeypatch.setattr(os, "fchown", failing_fchown)
    with pytest.raises(CommandError) as raised:
        _transfer._open_output(str(earlier))
    assert str(raised.value) == f"--out {earlier}: cannot write it ({os.strerror(failure)})"
    assert earlier.read_text("utf-8") == "an earlier export\n"
    assert [path.name for path in tmp_path.iterdir()] == ["e.jsonl"]


def _someone_elses_export(folder: Path, size: int) -> tuple[Path, bytes]:
    earlier = folder / "keep.jsonl"
    earlier.write_bytes(b"".join(b'{"content": "%07d"}\n' % n for n in range(size // 20)))
    os.chown(earlier, 65534, 65533)
    earlier.chmod(0o666)
    return earlier, earlier.read_bytes()


def test_an_export_in_place_that_fails_before_writing_leaves_the_file_as_it_was(
    tmp_path: Path, sample_copy: Path
) -> None:
    """A file written in place is not emptied on opening: an export that fails at its first
    row leaves it byte for byte as it was, with its inode."""
    if os.geteuid() != 0:
        pytest.skip("another user's file needs root to make")
    with closing(sqlite3.connect(sample_copy)) as conn, conn:
        conn.execute(
            "UPDATE items SET created_at = '1e400' WHERE seq = (SELECT min(seq) FROM items)"
        )
    earlier, content = _someone_elses_export(tmp_path, 430_000)
    inode = earlier.stat().st_ino
    result = _without_privileges("export", "--db", sample_copy, "--out", earlier, cwd=tmp_path)
    line = one_line_error(result, "lionmem export: the stored row of item ")
    assert "incomplete" not in line
    assert (earlier.read_bytes(), earlier.stat().st_ino) == (content, inode)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["copy.db", "keep.jsonl"]


def test_an_export_in_place_that_fails_after_writing_says_the_file_is_incomplete(
    tmp_path: Path, sample_copy: Path
) -> None:
    """A failure after pages were written in place says so; the file holds those pages, and
    none of the earlier file's lines after them."""
    if os.geteuid() != 0:
        pytest.skip("another user's file needs root to make")
    with closing(sqlite3.connect(sample_copy)) as conn, conn:
        conn.execute("UPDATE items SET content = '{not json' WHERE seq = 2500")
    earlier, _ = _someone_elses_export(tmp_path, 430_000)
    result = _without_privileges("export", "--db", sample_copy, "--out", earlier, cwd=tmp_path)
    line = one_line_error(result, "lionmem export: the stored row of item ")
    assert line.endswith(
        f"; --out {earlier} was written in place and is incomplete: it holds only what "
        "was written of the export before the failure"
    ), line
    pages = SAMPLE.read_bytes().splitlines(keepends=True)
    assert earlier.read_bytes() == b"".join(pages[:2000])


def _written_in_place(folder: Path, size: int, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An earlier export of ``size`` bytes that an export writes in place (its new file cannot
    have the earlier file's owner, as in a user namespace)."""
    earlier = folder / "keep.jsonl"
    earlier.write_bytes(b"".join(b'{"content": "%07d"}\n' % n for n in range(size // 20)))
    monkeypatch.setattr(_transfer, "_same_owner", lambda descriptor, found: False)
    return earlier


def _failing_after_two_pages(error: BaseException) -> Callable[..., int]:
    """A ``_write_page`` that writes two pages, then raises ``error``."""
    real_write_page = _transfer._write_page
    pages: list[int] = []

    def write_page(out: IO[bytes], page: list[bytes], progress: Any) -> int:
        if len(pages) == 2:
            raise error
        pages.append(real_write_page(out, page, progress))
        return pages[-1]

    return write_page


def _refused(number: int) -> Callable[..., None]:
    def refuse(*args: object) -> None:
        raise OSError(number, os.strerror(number))

    return refuse


_FIRST_2000 = b"".join(SAMPLE.read_bytes().splitlines(keepends=True)[:2000])


def test_an_export_in_place_that_is_cancelled_says_the_file_is_incomplete(
    tmp_path: Path,
    sample_db: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Ctrl-C cancels the export's task (asyncio.run turns the signal into a cancellation):
    after pages were written in place, the file is cut to them and the message says so."""
    earlier = _written_in_place(tmp_path, 2 * SAMPLE.stat().st_size, monkeypatch)
    cancelled = _failing_after_two_pages(asyncio.CancelledError())
    monkeypatch.setattr(_transfer, "_write_page", cancelled)
    with pytest.raises(asyncio.CancelledError):
        main(["export", "--db", str(sample_db), "--out", str(earlier)])
    assert capsys.readouterr().err == (
        f"lionmem export: --out {earlier} was written in place and is incomplete: it holds "
        "only what was written of the export before the failure\n"
    )
    assert earlier.read_bytes() == _FIRST_2000


def _disk_full_after_two_pages(
    folder: Path, size: int, sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, bytes]:
    """Export in place over an earlier file of about ``size`` bytes, the disk full after two
    pages and the file impossible to cut; return the file and what it held before."""
    earlier = _written_in_place(folder, size, monkeypatch)
    content = earlier.read_bytes()
    disk_full = _failing_after_two_pages(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    monkeypatch.setattr(_transfer, "_write_page", disk_full)
    monkeypatch.setattr(os, "ftruncate", _refused(errno.EIO))
    assert main(["export", "--db", str(sample_db), "--out", str(earlier)]) == 2
    return earlier, content


def test_an_export_in_place_that_cannot_be_cut_says_the_earlier_lines_follow(
    tmp_path: Path,
    sample_db: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """When a file written in place cannot be cut after a failure, the message says that the
    rest of the earlier file follows what was written, and why it could not be cut."""
    earlier, content = _disk_full_after_two_pages(
        tmp_path, 2 * SAMPLE.stat().st_size, sample_db, monkeypatch
    )
    assert capsys.readouterr().err == (
        f"lionmem export: --out {earlier}: cannot write it ({os.strerror(errno.ENOSPC)}); "
        f"--out {earlier} was written in place and is incomplete: it holds what was "
        "written of the export before the failure, then the rest of the earlier file, which "
        f"could not be cut ({os.strerror(errno.EIO)})\n"
    )
    assert earlier.read_bytes() == _FIRST_2000 + content[len(_FIRST_2000) :]


def test_an_export_in_place_over_a_shorter_file_needs_no_cut(
    tmp_path: Path,
    sample_db: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A failure after more was written in place than the earlier file held: nothing of that
    file is left to cut, and the message says the file holds only what was written."""
    earlier, _ = _disk_full_after_two_pages(tmp_path, 100, sample_db, monkeypatch)
    assert capsys.readouterr().err == (
        f"lionmem export: --out {earlier}: cannot write it ({os.strerror(errno.ENOSPC)}); "
        f"--out {earlier} was written in place and is incomplete: it holds only what was "
        "written of the export before the failure\n"
    )
    assert earlier.read_bytes() == _FIRST_2000


def test_a_complete_export_in_place_that_cannot_be_cut_says_so(
    tmp_path: Path,
    sample_db: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A whole export written in place over a longer file that cannot then be cut to its end
    is reported as written, with the earlier file's rest after it, and exits 2."""
    earlier = _written_in_place(tmp_path, 2 * SAMPLE.stat().st_size, monkeypatch)
    content = earlier.read_bytes()
    monkeypatch.setattr(os, "ftruncate", _refused(errno.EIO))
    assert main(["export", "--db", str(sample_db), "--out", str(earlier)]) == 2
    assert capsys.readouterr() == (
        "",
        f"lionmem export: --out {earlier}: written in place, but the rest of the earlier file "
        f"follows the export: it could not be cut ({os.strerror(errno.EIO)})\n",
    )
    export = SAMPLE.read_bytes()
    assert earlier.read_bytes() == export + content[len(export) :]


@pytest.fixture(params=[True, False], ids=["longer", "shorter"])
def earlier_in_place(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """An earlier file, longer or shorter than the sample's export, that it writes in place."""
    size = 2 * SAMPLE.stat().st_size if request.param else 100
    return _written_in_place(tmp_path, size, monkeypatch)


def test_a_complete_export_in_place_is_cut_then_synced(
    earlier_in_place: Path,
    sample_db: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A whole export written in place is on the disk, cut to its end, before it is reported."""
    earlier = earlier_in_place
    longer = earlier.stat().st_size > SAMPLE.stat().st_size
    events: list[str] = []
    fsync, ftruncate = os.fsync, os.ftruncate

    def recorded_fsync(descriptor: int) -> None:
        events.append("fsync " + os.path.basename(os.readlink(f"/proc/self/fd/{descriptor}")))
        fsync(descriptor)

    def recorded_ftruncate(descriptor: int, length: int) -> None:
        events.append(f"ftruncate {length}")
        ftruncate(descriptor, length)

    monkeypatch.setattr(os, "fsync", recorded_fsync)
    monkeypatch.setattr(os, "ftruncate", recorded_ftruncate)
    assert main(["export", "--db", str(sample_db), "--out", str(earlier)]) == 0
    assert capsys.readouterr() == (f"exported 3000 items to {earlier}\n", "")
    cut = [f"ftruncate {SAMPLE.stat().st_size}"] if longer else []
    assert events == [*cut, "fsync keep.jsonl"]
    assert earlier.read_bytes() == SAMPLE.read_bytes()


def test_an_export_in_place_that_cannot_be_synced_says_so(
    earlier_in_place: Path,
    sample_db: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A sync of a file written in place that fails (an I/O error) is exit 2: the file holds
    the whole export, cut to its end, and the message says it may not all be on the disk."""
    earlier = earlier_in_place
    monkeypatch.setattr(os, "fsync", _refused(errno.EIO))
    assert main(["export", "--db", str(sample_db), "--out", str(earlier)]) == 2
    assert capsys.readouterr() == (
        "",
        f"lionmem export: --out {earlier}: written in place and holds the export, but syncing "
        f"it failed ({os.strerror(errno.EIO)}): part of it may not be on the disk\n",
    )
    assert earlier.read_bytes() == SAMPLE.read_bytes()


def test_a_file_in_place_that_could_not_be_closed_may_miss_part_of_the_export(
    tmp_path: Path,
) -> None:
    """Closing a file written in place may fail after it was closed (a network filesystem's
    late write error): what it holds is then not known, and that is what is said."""
    stream = (tmp_path / "e.jsonl").open("wb", buffering=0)
    stream.close()
    output = _transfer._Output(stream, owned=True, in_place=True)
    assert output.discard() == (
        "holds the export, but closing it failed: part of it may not be on the disk"
    )


class _LateCloseError(io.FileIO):
    """A file whose close reports a write error after closing it (as a network filesystem may)."""

    def close(self) -> None:
        super().close()
        raise OSError(errno.EIO, os.strerror(errno.EIO))


def test_an_export_in_place_whose_close_fails_says_the_file_may_miss_part_of_it(
    tmp_path: Path,
    sample_db: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A whole export written in place whose close then fails: the message says that it holds
    the export and that part of it may not be on the disk, not that it is incomplete."""
    earlier = _written_in_place(tmp_path, 100, monkeypatch)
    real_open_output = _transfer._open_output

    def open_output(out: str, through: IO[bytes] | None) -> _transfer._Output:
        output = real_open_output(out, through)
        assert output.in_place
        late = _LateCloseError(os.dup(output.stream.fileno()), "wb")
        output.stream.close()
        return _transfer._Output(late, owned=True, in_place=True)

    monkeypatch.setattr(_transfer, "_open_output", open_output)
    assert main(["export", "--db", str(sample_db), "--out", str(earlier)]) == 2
    assert capsys.readouterr() == (
        "",
        f"lionmem export: --out {earlier}: cannot write it ({os.strerror(errno.EIO)}); "
        f"--out {earlier} was written in place and holds the export, but closing it failed: "
        "part of it may not be on the disk\n",
    )
    assert earlier.read_bytes() == SAMPLE.read_bytes()


def test_an_export_in_place_cuts_a_longer_earlier_file(tmp_path: Path, sample_db: Path) -> None:
    """A complete export written in place over a longer file ends where the export ends."""
    if os.geteuid() != 0:
        pytest.skip("another user's file needs root to make")
    earlier, _ = _someone_elses_export(tmp_path, 2 * SAMPLE.stat().st_size)
    result = _without_privileges("export", "--db", sample_db, "--out", earlier, cwd=tmp_path)
    assert (result.status, result.stderr) == (0, "")
    assert earlier.read_bytes() == SAMPLE.read_bytes()


def test_a_file_with_several_hard_links_is_refused(tmp_path: Path, sample_db: Path) -> None:
    """Replacing a file that has other names would leave them with the old content: it is
    refused, naming the redirection that writes through every name; both names are kept."""
    (tmp_path / "my file.jsonl").write_text("an earlier export\n", encoding="utf-8")
    (tmp_path / "backup.jsonl").hardlink_to(tmp_path / "my file.jsonl")
    result = lionmem("export", "--db", sample_db, "--out", "my file.jsonl", cwd=tmp_path)
    assert one_line_error(result, "") == (
        "lionmem export: --out my file.jsonl has 2 hard links: replacing it would leave the "
        "other names with the old content; remove them, or write through every name with "
        "lionmem export > 'my file.jsonl'"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["backup.jsonl", "my file.jsonl"]
    assert (tmp_path / "backup.jsonl").read_text("utf-8") == "an earlier export\n"
    assert (tmp_path / "my file.jsonl").stat().st_nlink == 2


def test_a_hard_linked_file_that_cannot_be_replaced_is_written_through_every_name(
    tmp_path: Path, sample_db: Path
) -> None:
    """A file with several hard links in a directory that refuses new files is written in
    place, as any file there is: every name has the new content (nothing is left behind with
    the old one, which is what the refusal of replacing it prevents)."""
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    (fixed / "e.jsonl").write_text("an earlier export\n", encoding="utf-8")
    (fixed / "e.jsonl").chmod(0o666)
    (fixed / "backup.jsonl").hardlink_to(fixed / "e.jsonl")
    fixed.chmod(0o555)
    try:
        result = _without_privileges("export", "--db", sample_db, "--out", "e.jsonl", cwd=fixed)
    finally:
        fixed.chmod(0o755)
    assert (result.status, result.stdout, result.stderr) == (
        0,
        "exported 3000 items to e.jsonl\n",
        "",
    )
    for name in ("e.jsonl", "backup.jsonl"):
        assert (fixed / name).read_bytes() == SAMPLE.read_bytes()
    assert (fixed / "e.jsonl").stat().st_nlink == 2
    assert sorted(path.name for path in fixed.iterdir()) == ["backup.jsonl", "e.jsonl"]


def test_export_out_takes_a_name_of_the_longest_length_allowed(
    tmp_path: Path, sample_db: Path
) -> None:
    """A 255-character ``--out`` name, new or existing, is written (the temporary file beside
    it has a short name of its own)."""
    name = "e" * 249 + ".jsonl"
    for _ in range(2):
        result = lionmem("export", "--db", sample_db, "--out", name, cwd=tmp_path)
        assert (result.status, result.stdout, result.stderr) == (
            0,
            f"exported 3000 items to {name}\n",
            "",
        )
        assert (tmp_path / name).read_bytes() == SAMPLE.read_bytes()
    assert sorted(path.name for path in tmp_path.iterdir()) == [name]


def _many_items(folder: Path, count: int) -> Path:
    """A SQLite file holding ``count`` small items, made by ``import``."""
    lines = "".join(f'{{"content": "item {index}"}}\n' for index in range(count))
    (folder / "many.jsonl").write_text(lines, encoding="utf-8")
    done = lionmem("import", "many.jsonl", "--db", "many.db", cwd=folder)
    assert done.status == 0, done
    (folder / "many.jsonl").unlink()
    return folder / "many.db"


@pytest.mark.slow
def test_sigterm_mid_export_removes_its_temporary_file_and_keeps_an_earlier_file(
    tmp_path: Path,
) -> None:
    """SIGTERM while ``export --out`` writes is handled as Ctrl-C: the export says so, exits
    143, removes its hidden temporary file and leaves an earlier file of that name whole."""
    db = _many_items(tmp_path, 100_000)
    (tmp_path / "e.jsonl").write_text("an earlier export\n", encoding="utf-8")
    command = [str(LIONMEM), "export", "--db", str(db), "--out", "e.jsonl"]
    process = subprocess.Popen(
        command, cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while not glob.glob(str(tmp_path / ".lm*")):
        assert process.poll() is None, "the export ended before its file was seen"
        assert time.monotonic() < deadline
        time.sleep(0.001)
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=60)
    assert (process.returncode, stdout, stderr) == (143, b"", b"lionmem export: terminated\n")
    assert (tmp_path / "e.jsonl").read_text("utf-8") == "an earlier export\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["e.jsonl", "many.db"]


def test_the_complete_file_is_on_the_disk_before_it_replaces_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``finish`` syncs the temporary file, renames it over the file it replaces, then syncs
    the directory, so the rename itself survives a power loss."""
    (tmp_path / "e.jsonl").write_text("an earlier export\n", encoding="utf-8")
    events: list[str] = []
    fsync, replace = os.fsync, os.replace

    def recorded_fsync(descriptor: int) -> None:
        events.append("fsync " + os.path.basename(os.readlink(f"/proc/self/fd/{descriptor}")))
        fsync(descriptor)

    def recorded_replace(source: str | Path, target: str | Path) -> None:
        events.append(f"replace {os.path.basename(source)} {os.path.basename(target)}")
        replace(source, target)

    monkeypatch.setattr(os, "fsync", recorded_fsync)
    monkeypatch.setattr(os, "replace", recorded_replace)
    output = _transfer._open_output(str(tmp_path / "e.jsonl"))
    assert output.partial is not None
    temporary = output.partial.name
    output.stream.write(b"new\n")
    output.finish()
    assert events == [
        f"fsync {temporary}",
        f"replace {temporary} e.jsonl",
        f"fsync {tmp_path.name}",
    ]
    assert (tmp_path / "e.jsonl").read_text("utf-8") == "new\n"


@pytest.mark.parametrize("refusal", [errno.EINVAL, errno.ENOTSUP, errno.EACCES])
def test_a_directory_that_cannot_be_synced_still_gets_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusal: int
) -> None:
    """A filesystem that refuses to sync a directory (or to open it) does not fail the export:
    the file is in place, and nothing else is left beside it."""
    (tmp_path / "e.jsonl").write_text("an earlier export\n", encoding="utf-8")
    fsync = os.fsync

    def refusing_fsync(descriptor: int) -> None:
        if stat.S_ISDIR(os.fstat(descriptor).st_mode):
            raise OSError(refusal, os.strerror(refusal))
        fsync(descriptor)

    monkeypatch.setattr(os, "fsync", refusing_fsync)
    output = _transfer._open_output(str(tmp_path / "e.jsonl"))
    output.stream.write(b"new\n")
    output.finish()
    assert (tmp_path / "e.jsonl").read_text("utf-8") == "new\n"
    assert [path.name for path in tmp_path.iterdir()] == ["e.jsonl"]


def test_a_failed_directory_sync_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory sync that fails for another reason (an I/O error) is not hidden, exit 2, but
    the file is in place with the new content and the message says so."""
    fsync = os.fsync

    def failing_fsync(descriptor: int) -> None:
        if stat.S_ISDIR(os.fstat(descriptor).st_mode):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        fsync(descriptor)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    (tmp_path / "e.jsonl").write_text("an earlier export\n", encoding="utf-8")
    assert main(["add", "x", "--db", str(tmp_path / "t.db")]) == 0
    capsys.readouterr()
    status = main(["export", "--db", str(tmp_path / "t.db"), "--out", str(tmp_path / "e.jsonl")])
    captured = capsys.readouterr()
    assert (status, captured.out, captured.err) == (
        2,
        "",
        f"lionmem export: --out {tmp_path / 'e.jsonl'}: written, but its directory could not "
        "be synced (Input/output error)\n",
    )
    assert json.loads((tmp_path / "e.jsonl").read_text("utf-8"))["content"] == "x"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["e.jsonl", "t.db"]


def test_out_in_a_symbolic_link_loop_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    assert lionmem("add", "x", "--db", "t.db", cwd=tmp_path).status == 0
    result = lionmem("export", "--db", "t.db", "--out", "a", cwd=tmp_path)
    assert one_line_error(result, "lionmem export: ") == (
        "lionmem export: --out a: cannot write it (Too many levels of symbolic links)"
    )


def test_export_to_a_closed_standard_output_is_one_line(tmp_path: Path) -> None:
    assert lionmem("add", "x", "--db", "t.db", cwd=tmp_path).status == 0
    command = ["sh", "-c", 'exec "$@" >&-', "sh", str(LIONMEM), "export", "--db", "t.db"]
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, env=clean_env(), check=False
    )
    assert (done.returncode, done.stderr) == (
        2,
        "lionmem export: standard output is closed: give --out, or redirect it "
        "(to /dev/null to drop what the command prints)\n",
    )


@pytest.mark.parametrize(
    "out", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "//dev/stdout", "stdout-link"]
)
def test_out_naming_a_closed_standard_output_is_refused(tmp_path: Path, out: str) -> None:
    """With standard output closed, ``--out`` naming it is refused as a closed standard output
    is (its descriptor holds the null device, where the export would silently go)."""
    (tmp_path / "stdout-link").symlink_to("/dev/stdout")
    assert lionmem("add", "x", "--db", "t.db", cwd=tmp_path).status == 0
    command = ["sh", "-c", 'exec "$@" >&-', "sh", str(LIONMEM), "export", "--db", "t.db"]
    done = subprocess.run(
        [*command, "--out", out],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=clean_env(),
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"lionmem export: standard output is closed (--out {out} names it): give --out, or "
        "redirect it (to /dev/null to drop what the command prints)\n",
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["stdout-link", "t.db"]


def test_out_naming_standard_output_writes_through_it(tmp_path: Path, sample_db: Path) -> None:
    """``--out /dev/stdout`` is standard output: appended to a file as ``>>`` asks (never put in
    that file's place), and without the summary line, which would be a line of the data."""
    (tmp_path / "log.jsonl").write_text("an earlier line\n", encoding="utf-8")
    inode = (tmp_path / "log.jsonl").stat().st_ino
    script = f'"{LIONMEM}" export --db "{sample_db}" --out /dev/stdout >> log.jsonl'
    appended = subprocess.run(
        ["sh", "-c", script], cwd=tmp_path, env=clean_env(), capture_output=True, check=False
    )
    assert (appended.returncode, appended.stdout, appended.stderr) == (0, b"", b"")
    assert (tmp_path / "log.jsonl").read_bytes() == b"an earlier line\n" + SAMPLE.read_bytes()
    assert (tmp_path / "log.jsonl").stat().st_ino == inode
    assert sorted(path.name for path in tmp_path.iterdir()) == ["log.jsonl"]
    piped = (
        f'"{LIONMEM}" export --db "{sample_db}" --out /dev/stdout | "{LIONMEM}" import - --db c.db'
    )
    copied = subprocess.run(
        ["sh", "-c", piped], cwd=tmp_path, env=clean_env(), capture_output=True, check=False
    )
    assert (copied.returncode, copied.stdout, copied.stderr) == (
        0,
        b"imported 3000 items from standard input\n",
        b"",
    )


def test_out_naming_another_descriptor_writes_through_it(tmp_path: Path, sample_db: Path) -> None:
    """``--out /dev/fd/3`` (or ``/dev/stderr``, or a link to one) writes through the descriptor
    as the shell opened it: appended to the log ``3>>`` names, never put in that file's place."""
    (tmp_path / "log").write_text("an earlier line\n", encoding="utf-8")
    (tmp_path / "three").symlink_to("/dev/fd/3")
    inode = (tmp_path / "log").stat().st_ino
    for out in ("/dev/fd/3", "//proc/self/fd/3", "three"):
        script = f'"{LIONMEM}" export --db "{sample_db}" --out {out} 3>> log'
        done = subprocess.run(
            ["sh", "-c", script], cwd=tmp_path, capture_output=True, env=clean_env(), check=False
        )
        summary = f"exported 3000 items to {out}\n".encode()
        assert (done.returncode, done.stdout, done.stderr) == (0, summary, b""), out
    exported = lionmem("export", "--db", sample_db, cwd=tmp_path).stdout
    log = (tmp_path / "log").read_text("utf-8")
    assert (log, (tmp_path / "log").stat().st_ino) == ("an earlier line\n" + exported * 3, inode)


def test_out_naming_a_descriptor_not_open_is_refused(tmp_path: Path) -> None:
    assert lionmem("add", "x", "--db", "t.db", cwd=tmp_path).status == 0
    result = lionmem("export", "--db", "t.db", "--out", "/dev/fd/9", cwd=tmp_path)
    assert one_line_error(result, "lionmem export: ") == (
        "lionmem export: --out /dev/fd/9 names descriptor 9, which is not open"
    )
