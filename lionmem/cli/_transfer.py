"""``import`` and ``export``: JSON Lines in and out of a store, streaming, all or nothing.

``import`` validates every line as a ``MemoryItem`` document and stores the lot in one
transaction: a bad line aborts with its number and the reason, and nothing is written (a killed
import leaves nothing either). ``--skip-invalid`` stores the good lines and reports each bad one.
A store with ``store_stream`` (SQLite, PostgreSQL) reads the file as it writes, in constant
memory; another store gets one ``store_many`` call. ``export`` writes every item in insertion
order, a page at a time, as ``model_dump_json()`` lines, which ``import`` reads back field for
field.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import contextlib
import errno
import os
import queue
import select
import shlex
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from lionmem._threads import start_thread
from lionmem.cli._errors import (
    OK,
    PROBLEM,
    CommandError,
    open_file,
    refuse_empty,
    refuse_trailing_slash,
    validation_message,
)
from lionmem.cli._lines import TOO_LONG, Lines, lines_of
from lionmem.cli._output import (
    ProgressBar,
    descriptor_named,
    flush_all,
    is_terminal,
    plural,
    say_done,
    visible,
    write_all,
)
from lionmem.cli._signals import STOP, stopped_waiting
from lionmem.cli._store import (
    add_store_arguments,
    is_postgres,
    run_on_store,
    store_method,
    store_target,
)
from lionmem.errors import MemoryAdapterError
from lionmem_models.memory_item import MemoryItem

__all__ = ["register"]

_EXPORT_PAGE = 1000
_PROGRESS_EVERY = 256  # lines read between two updates of the progress bar
_CHUNK_BYTES = 1 << 16  # the most a pipe's reading thread hands over at a time
_STOP_POLL = 0.1  # seconds between two looks at the stop flag while a pipe is silent


class _BadLine(Exception):
    """A line that is not a valid MemoryItem document, in all-or-nothing mode."""


class _Stopped(Exception):
    """The import was interrupted: the store rolls the transaction back."""


@dataclass
class _Reader:
    """The items of a JSON Lines stream, with the number of the line each came from."""

    stream: IO[bytes]
    skip_invalid: bool
    progress: ProgressBar
    # The import's task, which Ctrl-C cancels. The reader asks it rather than waiting for the
    # cancellation to arrive: SQLite reads in its worker thread, and a store that reads on the
    # event loop's thread (PostgreSQL) keeps the cancellation from being delivered meanwhile.
    task: asyncio.Task[Any] | None
    line: int = 0
    problems: list[tuple[int, str]] = field(default_factory=list)
    done: bool = False  # every line was read: an interruption no longer stops the import

    @property
    def stopped(self) -> bool:
        """Whether the import was interrupted: the reader then stops at its next line."""
        return self.task is not None and self.task.cancelling() > 0

    def __iter__(self) -> Iterator[MemoryItem]:
        validate = MemoryItem.model_validate_json
        advance = self.progress.advance
        pending = 0
        size = 0
        for raw in self._lines():
            if self.stopped:
                raise _Stopped
            self.line += 1
            pending += 1
            size += raw if isinstance(raw, int) else len(raw)
            if pending == _PROGRESS_EVERY:
                advance(pending, size)
                pending = size = 0
            if isinstance(raw, int):  # the length of a line too long to hold
                self._bad(TOO_LONG)
                continue
            # A byte-order mark at the very start of the input is an editor's, not data.
            bom = self.line == 1 and raw.startswith(codecs.BOM_UTF8)
            text = raw[len(codecs.BOM_UTF8) :] if bom else raw
            if not text.strip():
                continue
            try:
                # Without its line break, so a JSON error's position reads "line 1 column N".
                item = validate(text.rstrip(b"\r\n"))
            except ValidationError as error:
                self._bad(validation_message(error))
                continue
            yield item
        if self.stopped:  # interrupted while it waited for the end of the input
            raise _Stopped
        self.done = True
        advance(pending, size)

    def _lines(self) -> Iterator[bytes | int]:
        """The stream's lines (the length of one too long to hold). A pipe or a terminal is read
        by a thread of its own, so that an interrupted import stops at once rather than when
        (or if) the next line arrives."""
        try:
            regular = stat.S_ISREG(os.fstat(self.stream.fileno()).st_mode)
        except (AttributeError, OSError, ValueError):
            regular = True
        if not regular:
            return self._read_aside()

        def read(size: int) -> bytes:
            if self.stopped:  # also within a line too long to keep, read to its end
                raise _Stopped
            return self.stream.read(size)

        return lines_of(read)

    def _read_aside(self) -> Iterator[bytes | int]:
        # A duplicate of the descriptor: closing the stream does not wait for the blocked read.
        # os.read hands on whatever has arrived, so a line is validated as soon as it is
        # complete, and its first empty answer is the end (one Ctrl-D on a terminal).
        source = os.dup(self.stream.fileno())
        chunks: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=8)

        def read() -> None:
            try:
                while chunk := _read_waiting(source):
                    chunks.put(chunk)
            except BaseException as error:  # given to the import, which raises it
                chunks.put(error)
            else:
                chunks.put(None)
            finally:
                os.close(source)

        start_thread(threading.Thread(target=read, name="lionmem-import-input", daemon=True))
        lines = Lines()
        while True:
            try:
                chunk = chunks.get(timeout=_STOP_POLL)
            except queue.Empty:
                if self.stopped:
                    raise _Stopped from None
                continue
            if chunk is None:
                yield from lines.end()
                return
            if isinstance(chunk, BaseException):
                raise chunk
            if self.stopped:  # also when chunks keep coming with no line ending among them
                raise _Stopped
            yield from lines.feed(chunk)

    def _bad(self, problem: str) -> None:
        reason = visible(problem)  # a field name from the line may hold control characters
        if not self.skip_invalid:
            raise _BadLine(f"line {self.line}: {reason}")
        self.problems.append((self.line, reason))

    def unrepresentable(self, item: MemoryItem, error: Exception) -> None:
        """Record (or, in all-or-nothing mode, raise) an item the store cannot keep exactly.

        The store calls this while the reader waits at the item it yielded last, so
        ``self.line`` is that item's line.
        """
        self._bad(str(error))


def _read_waiting(descriptor: int) -> bytes:
    """Read what has arrived at ``descriptor``; an input another process made non-blocking
    (``O_NONBLOCK``, shared by every holder of the pipe) is waited for while it is empty."""
    while True:
        try:
            return os.read(descriptor, _CHUNK_BYTES)
        except BlockingIOError:
            select.select([descriptor], [], [])


def _open_input(name: str) -> tuple[IO[bytes], float | None]:
    if name == "-":
        if sys.stdin is None:  # started with standard input closed (<&-)
            msg = "standard input is closed: give a file, or pipe the lines in"
            raise CommandError(msg)
        return sys.stdin.buffer, None
    stream = open_file(name, "JSON Lines file")
    return stream, float(os.fstat(stream.fileno()).st_size)


def _import(args: argparse.Namespace) -> int:
    stream, size = _open_input(args.file)

    async def work(store: Any) -> int:
        with contextlib.closing(stream), ProgressBar("importing", total=size) as progress:
            reader = _Reader(stream, args.skip_invalid, progress, asyncio.current_task())
            try:
                stored = await _store_all(store, reader)
            except _BadLine as bad:
                print(f"lionmem import: {bad}; nothing was imported", file=sys.stderr)
                return PROBLEM
        for line, reason in reader.problems:
            print(f"lionmem import: line {line}: {reason}", file=sys.stderr)
        source = "standard input" if args.file == "-" else visible(args.file)
        skipped = len(reader.problems)
        note = f" ({plural(skipped, 'invalid line')} skipped)" if skipped else ""
        say_done(f"imported {plural(stored, 'item')} from {source}{note}")
        return PROBLEM if skipped else OK

    return run_on_store(args, work, create=True)


async def _store_all(store: Any, reader: _Reader) -> int:
    stream_to = getattr(store, "store_stream", None)
    if stream_to is not None:
        written = stream_to(reader, on_unrepresentable=reader.unrepresentable)
        return int(await _streamed(written, reader))
    store_many = store_method(store, "store_many")
    items = list(reader)
    try:
        return len(await store_many(items))
    except MemoryAdapterError as error:
        if not isinstance(error, ValueError):
            raise
        # A value this store cannot keep: store_many names the field, not the line.
        raise _BadLine(f"{error}") from None


async def _streamed(write: Awaitable[int], reader: _Reader) -> int:
    """Return the outcome of ``write``, the store's one transaction, even when the import is
    interrupted (Ctrl-C or SIGTERM) meanwhile.

    While lines are read, the reader stops at its next one and the store rolls everything
    back: the interruption stands. Once every line was read, the store writes, indexes and
    commits the items and completes that (however long it waits for another writer's lock);
    the command says so at once, ignores every further Ctrl-C and SIGTERM, and reports the
    import done, since running it again would store the items twice.
    """
    handed, stopped = await stopped_waiting(write)
    if not stopped:
        return handed.result()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # SIGTERM is raised as SIGINT: both ignored
    told = reader.done
    if told:
        print(
            f"lionmem import: {STOP.word} after the last line was read; waiting for the store "
            "to commit the import",
            file=sys.stderr,
        )
    try:
        stored = await handed  # the task stays cancelled meanwhile: the reader sees it
    except _Stopped:
        raise asyncio.CancelledError from None  # rolled back: the interruption stands
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()
    if not told:  # the reader's last line was read just as the stop came
        print(
            f"lionmem import: {STOP.word} after the last line was read; the store committed "
            "the import",
            file=sys.stderr,
        )
    return stored


@dataclass
class _Output:
    """Where an export goes: stdout, or the ``--out`` file (``owned``).

    A regular file, new or existing, is written to a temporary file beside it (``partial``)
    that replaces it (``replaces``) once complete and synced, with its mode, owner and group,
    so a failed export leaves it as it was (a process killed by a signal leaves the temporary
    file too); a symbolic link is kept and the file it points to replaced that way; a named
    pipe or a device is written through and never removed. A file that cannot be replaced (its
    directory refuses new files, a new file could not have its owner) is written in place
    (``in_place``), through every name it has: opened without emptying it, written from the
    start and cut to the written length at the end; one with several hard links that could be
    replaced is refused.
    """

    stream: IO[bytes]
    owned: bool = False
    partial: Path | None = None
    replaces: str = ""
    in_place: bool = False

    def discard(self) -> str:
        """Close the file after a failure and remove what was written of a temporary one;
        return what a file written in place now holds, in words, or "" when it is as it was.
        It is cut to what was written of the export, unless cutting it fails too."""
        held = ""
        if self.in_place and self.stream.closed:  # finish() could not close it
            held = _HELD_UNCLOSED
        elif self.in_place:  # unbuffered: its offset is what it holds
            descriptor = self.stream.fileno()
            try:
                written = os.lseek(descriptor, 0, os.SEEK_CUR)
                longer = os.fstat(descriptor).st_size > written
            except OSError as error:
                held = f"{_HELD_UNKNOWN} ({error.strerror or error})"
            else:
                held = _HELD if written else ""
                if written and longer:  # no lines of the earlier file after ours
                    try:
                        os.ftruncate(descriptor, written)
                    except OSError as error:
                        held = f"{_HELD_UNCUT} ({error.strerror or error})"
        self._close_quietly()
        if self.partial is not None:
            self.partial.unlink(missing_ok=True)
        return held

    def finish(self) -> None:
        """Close the complete file and put it in the place of the one it replaces."""
        if self.partial is not None:  # on the disk before it replaces the old file
            self.stream.flush()
            os.fsync(self.stream.fileno())
        if self.in_place:  # the earlier file may have been longer
            descriptor = self.stream.fileno()
            end = os.lseek(descriptor, 0, os.SEEK_CUR)
            if os.fstat(descriptor).st_size > end:
                try:
                    os.ftruncate(descriptor, end)
                except OSError as error:
                    self._close_quietly()
                    raise _NotCut(error.strerror or error) from None
            try:  # on the disk before the export is said to be written
                os.fsync(descriptor)
            except OSError as error:
                self._close_quietly()
                raise _NotSynced(
                    f"written in place and holds the export, but syncing it failed "
                    f"({error.strerror or error}): part of it may not be on the disk"
                ) from None
        self.stream.close()
        if self.partial is not None:
            os.replace(self.partial, self.replaces)
            self.partial = None  # in place: nothing to remove any more
            try:
                _sync_directory(os.path.dirname(self.replaces))
            except OSError as error:
                raise _NotSynced(
                    f"written, but its directory could not be synced ({error.strerror or error})"
                ) from None

    def _close_quietly(self) -> None:
        with contextlib.suppress(OSError):
            self.stream.close()


# What a file written in place holds after a failed export, cut or not: each follows
# "<file> was written in place and".
_HELD = "is incomplete: it holds only what was written of the export before the failure"
_HELD_UNCUT = (
    "is incomplete: it holds what was written of the export before the failure, then the rest "
    "of the earlier file, which could not be cut"
)
_HELD_UNKNOWN = "may hold part of the export: how much could not be read"
_HELD_UNCLOSED = "holds the export, but closing it failed: part of it may not be on the disk"


class _NotCut(Exception):
    """The export was written in place in full, but the longer earlier file could not be cut
    to its end: the rest of that file follows the export."""


class _NotSynced(Exception):
    """The export is whole in its file, but a sync failed: the new file's directory (the rename
    may not survive a power loss), or a file written in place. The message says which."""


# What a directory that cannot be synced answers: a filesystem without directory fsync, or a
# directory this user may not open for reading. The file is in place either way.
_NO_DIRECTORY_SYNC = frozenset(
    {errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EBADF, errno.EACCES, errno.EPERM}
)


def _sync_directory(folder: str) -> None:
    """Put the directory's entries on the disk, so a rename into it survives a power loss."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        if error.errno in _NO_DIRECTORY_SYNC:
            return
        raise
    try:
        os.fsync(descriptor)
    except OSError as error:
        if error.errno not in _NO_DIRECTORY_SYNC:
            raise
    finally:
        os.close(descriptor)


def _is_stdout(name: str) -> bool:
    """Whether ``name`` is the file standard output already writes (``/dev/stdout``, or the file
    it is redirected to): replacing that file would lose what the shell set up (``>>``)."""
    try:
        return sys.stdout is not None and os.path.samestat(
            os.stat(name), os.fstat(sys.stdout.fileno())
        )
    except (OSError, ValueError):
        return False


def _through_descriptor(name: str | None) -> IO[bytes] | None:
    """A stream on a copy of the descriptor other than stdout's that ``name`` designates
    (``/dev/fd/3``, ``/dev/stderr``), written through as the shell opened it; else ``None``.

    Taken before the store opens descriptors of its own, which the name could designate too.
    """
    descriptor = None if name is None or name == "-" else descriptor_named(name)
    if descriptor is None or descriptor == 1:
        return None
    try:
        return os.fdopen(os.dup(descriptor), "wb")
    except OSError:
        msg = f"--out {name} names descriptor {descriptor}, which is not open"
        raise CommandError(msg) from None


def _open_output(name: str | None, through: IO[bytes] | None = None) -> _Output:
    if through is not None:
        return _Output(through, owned=True)  # written through, never replaced
    named_stdout = name not in (None, "-") and descriptor_named(str(name)) == 1
    if name is None or name == "-" or named_stdout or _is_stdout(name):
        if sys.stdout is None:  # started with standard output closed (>&-)
            msg = "standard output is closed: give --out FILE, or redirect it"
            raise CommandError(msg)
        sys.stdout.flush()
        return _Output(sys.stdout.buffer)
    refuse_empty(name, "file", "--out")
    path = Path(name)
    if path.is_dir():
        msg = f"--out {name} is a directory, not a file"
        raise CommandError(msg)
    refuse_trailing_slash(name, "file", "--out")
    if not path.parent.is_dir():
        msg = f"--out {name}: the directory {path.parent} does not exist"
        raise CommandError(msg)
    try:
        real = os.path.realpath(path)  # a symbolic link stays: the file it points to is replaced
        try:
            found: os.stat_result | None = os.stat(real)
        except FileNotFoundError:
            found = None
        if found is not None and not stat.S_ISREG(found.st_mode):
            return _Output(path.open("wb"), owned=True)  # a pipe, a device
        created = _replacement(real, found, _mode_for(real, found))
        if created is None:  # a file that cannot be replaced: written in place, every name
            # Not emptied on opening: a failure before the first write leaves it as it was.
            # Unbuffered: what the file holds after a failure is what its offset says.
            stream = os.fdopen(os.open(path, os.O_WRONLY), "wb", buffering=0)
            return _Output(stream, owned=True, in_place=True)
        descriptor, partial = created
        if found is not None and found.st_nlink > 1:
            os.close(descriptor)
            os.unlink(partial)
            msg = (
                f"--out {name} has {found.st_nlink} hard links: replacing it would leave "
                "the other names with the old content; remove them, or write through every "
                f"name with lionmem export > {shlex.quote(name)}"
            )
            raise CommandError(msg)
        return _Output(
            os.fdopen(descriptor, "wb"), owned=True, partial=Path(partial), replaces=real
        )
    except OSError as error:
        msg = f"--out {name}: cannot write it ({error.strerror})"
        raise CommandError(msg) from None


def _mode_for(real: str, found: os.stat_result | None) -> int:
    """The mode of the file that will replace ``real``: its own, or the umask's for a new one;
    raise when an existing file may not be written."""
    if found is None:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
    if not os.access(real, os.W_OK):  # replacing it would go round its permissions
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    return stat.S_IMODE(found.st_mode)


def _replacement(real: str, found: os.stat_result | None, mode: int) -> tuple[int, str] | None:
    """The temporary file that will replace ``real``, with ``mode`` and the owner and group of
    the file it replaces; None when an existing file must be written in place instead."""
    created = _temporary_beside(real, found)
    if created is None:
        return None
    descriptor, partial = created
    try:
        kept = found is None or _same_owner(descriptor, found)
        if kept:  # after chown, which clears the set-user-ID and set-group-ID bits
            os.fchmod(descriptor, mode)
    except BaseException:
        os.close(descriptor)
        os.unlink(partial)
        raise
    if not kept:  # a file whose owner or group a new file cannot have
        os.close(descriptor)
        os.unlink(partial)
        return None
    return created


def _same_owner(descriptor: int, found: os.stat_result) -> bool:
    """Give the new file ``descriptor`` the owner and group of the file it replaces; return
    whether it has them (changing the owner needs root, the group membership of it; in a user
    namespace or on a filesystem mapping owners, an owner outside the mapping is refused with
    EINVAL, ENOTSUP or ENOSYS: that file too is written in place). Another error (EIO, EDQUOT)
    is raised."""
    made = os.fstat(descriptor)
    if (made.st_uid, made.st_gid) == (found.st_uid, found.st_gid):
        return True
    try:
        os.fchown(descriptor, found.st_uid, found.st_gid)
    except OSError as error:
        if error.errno in _OWNER_REFUSED:
            return False
        raise
    return True


# What chown answers for an owner a new file cannot have: no privilege, or an id outside the
# mapping of a user namespace or a filesystem (NFS, FUSE).
_OWNER_REFUSED = frozenset(
    {errno.EPERM, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS}
)


def _temporary_beside(real: str, found: os.stat_result | None) -> tuple[int, str] | None:
    """Create the temporary file that will replace ``real``; return None when an existing file
    cannot be replaced: its directory refuses new files, or is sticky (``/tmp``) and neither
    it nor the file belongs to this user."""
    folder = os.path.dirname(real)
    if found is not None:
        directory = os.stat(folder)
        sticky = directory.st_mode & stat.S_ISVTX
        if sticky and os.geteuid() not in (found.st_uid, directory.st_uid):
            return None
    try:
        return tempfile.mkstemp(dir=folder, prefix=".lm")  # short: any valid name fits beside it
    except PermissionError:
        if found is None:
            raise
        return None


def _refuse_the_database_itself(out: str | None, db: str | None) -> None:
    """Refuse ``--out`` naming the database file (or its journal), by any of its paths or links:
    writing it would destroy it."""
    target = store_target(db)
    if out in (None, "-") or is_postgres(target) or target == ":memory:":
        return
    written = Path(os.path.realpath(out))  # realpath: a symbolic link loop is no error here
    # SQLite keeps its journal beside the file a linked --db resolves to, not beside the link.
    resolved = os.path.realpath(target)
    for suffix in ("", "-wal", "-shm", "-journal"):
        for database in (Path(target + suffix), Path(resolved + suffix)):
            if written == Path(os.path.realpath(database)) or _same_file(written, database):
                msg = f"--out {out} is the database file itself; write the export to another file"
                raise CommandError(msg)


def _same_file(first: Path, second: Path) -> bool:
    """Return whether both paths exist and are one file (a hard link is another name of it)."""
    try:
        return first.samefile(second)
    except OSError:
        return False


def _export(args: argparse.Namespace) -> int:
    _refuse_the_database_itself(args.out, args.db)
    through = _through_descriptor(args.out)
    # The model's own serializer, called directly: the bytes of model_dump_json(), unencoded.
    to_json = MemoryItem.__pydantic_serializer__.to_json

    async def work(store: Any) -> int:
        items = store_method(store, "items")
        total = await store_method(store, "count")()
        output = _open_output(args.out, through)
        out = output.stream
        on_screen = not output.owned and is_terminal(sys.stdout)
        written = 0
        try:
            with ProgressBar("exporting", total=total, enabled=not on_screen) as progress:
                page: list[bytes] = []
                async for item in items(batch_size=_EXPORT_PAGE):
                    page.append(to_json(item))
                    if len(page) == _EXPORT_PAGE:
                        written += _write_page(out, page, progress)
                        page = []
                written += _write_page(out, page, progress)
            flush_all(out)
            if output.owned:
                output.finish()
        except _NotSynced as error:
            raise CommandError(f"--out {args.out}: {error}") from None
        except _NotCut as error:
            msg = (
                f"--out {args.out}: written in place, but the rest of the earlier file follows "
                f"the export: it could not be cut ({error})"
            )
            raise CommandError(msg) from None
        except BaseException as error:
            if output.owned:
                incomplete = output.discard()
                cut = f"--out {args.out} was written in place and {incomplete}"
                if isinstance(error, OSError):
                    msg = f"--out {args.out}: cannot write it ({error.strerror or error})"
                    raise CommandError(f"{msg}; {cut}" if incomplete else msg) from None
                if incomplete and isinstance(error, CommandError | MemoryAdapterError):
                    raise CommandError(f"{error}; {cut}") from None
                if incomplete:  # an interruption (Ctrl-C cancels the task), a fault: said too
                    print(f"lionmem export: {visible(cut)}", file=sys.stderr)
            raise
        if output.owned:
            say_done(f"exported {plural(written, 'item')} to {visible(args.out)}")
        return OK

    return run_on_store(args, work)


def _write_page(out: IO[bytes], page: list[bytes], progress: ProgressBar) -> int:
    if page:
        write_all(out, b"\n".join(page) + b"\n")
        progress.advance(len(page))
    return len(page)


# ``commands`` is argparse's subparsers action, whose class argparse keeps private.
def register(commands: Any) -> None:
    """Add ``import`` and ``export`` to ``commands``."""
    load = commands.add_parser(
        "import",
        help="store every item of a JSON Lines file, all or nothing",
        description=(
            "Validate every line of FILE as a MemoryItem document and store them all in one "
            "transaction: a bad line aborts with its number, and nothing is written. An item "
            "whose id is already stored replaces it."
        ),
    )
    load.add_argument("file", metavar="FILE", help="a JSON Lines file, or - for standard input")
    load.add_argument(
        "--skip-invalid",
        action="store_true",
        help="store the valid lines, report each invalid one and exit 1",
    )
    add_store_arguments(load)
    load.set_defaults(handler=_import)

    dump = commands.add_parser(
        "export",
        help="write every item as JSON Lines, in insertion order",
        description="Write every item, in insertion order, as JSON Lines (one item a line).",
    )
    dump.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    add_store_arguments(dump)
    dump.set_defaults(handler=_export)
