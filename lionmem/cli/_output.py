"""How commands show results: a table on a terminal, JSON Lines when piped or with ``--json``.

JSON Lines are each item's ``model_dump_json()`` in UTF-8, the form ``import`` reads back. Tables
and progress bars use rich (the ``cli`` extra), imported only when a terminal needs them.
A progress bar goes to stderr, only when stderr is a terminal (a command whose data goes to
the screen turns it off); it appears once the work passes ``PROGRESS_AFTER`` items.

Every byte a command writes to stdout goes through ``write_all``, which waits while a
non-blocking output (a pipe or terminal another process made so) is full: text lines through
``say``, tables through ``STDOUT``, the text stream rich is given; never ``print``. Text a
person reads never fails on stdout's encoding: a character it cannot write is written as its
escape (``\\xfc``, ``\\u2192``; JSON's ``\\u00fc`` in JSON text, so it stays JSON), before a
table is measured (``writable``), and a byte of a file name that is not text in the locale's
encoding as that byte.
"""

from __future__ import annotations

import bisect
import codecs
import errno
import json
import os
import re
import select
import shutil
import sys
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Literal, Self, cast

from lionmem.cli._errors import CommandError, missing, require_extra
from lionmem_models.memory_item import MemoryItem

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

__all__ = [
    "PROGRESS_AFTER",
    "STDOUT",
    "ProgressBar",
    "descriptor_named",
    "flush_all",
    "is_terminal",
    "plural",
    "print_item",
    "print_items",
    "say",
    "visible",
    "visible_json",
    "writable",
    "write_all",
    "write_json_lines",
]

PROGRESS_AFTER = 2000
_CONTENT_WIDTH = 80
_MIN_CONTENT = 16
_WIDE_CONTENT = 24
_TAGS_WIDTH = 24
_ID_WIDTH = 36
_DATE_WIDTH = 10
_GAP = 2
# What a terminal would act on or not show: the Unicode categories of controls (Cc: C0, DEL,
# C1), of invisible format characters (Cf: bidirectional controls, zero-width spaces, the word
# joiner, the byte-order mark, tag characters), of line and paragraph separators (Zl, Zp) and of
# surrogates (Cs, which no terminal encoding can write).
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
# The format characters of ordinary text, shown as written: the zero-width non-joiner and joiner
# (inside Persian and Indic words, and joining emoji sequences) and the soft hyphen.
_ORDINARY_FORMAT = frozenset("\u200c\u200d\u00ad")
_BYTE = 0xFF  # the largest code point written as \xNN in text
_BMP = 0xFFFF  # the largest code point written as \uNNNN in text
_UNDECODED = 0xDC00  # surrogateescape: byte N (0x80 or more) of a name not UTF-8 is U+DC00 + N
_FIRST_UNDECODED = 0x80


def is_terminal(stream: IO[str]) -> bool:
    """Return whether ``stream`` is a terminal a person reads."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def _content_text(content: Any, *, lines: bool = False) -> str:
    """Text content safe to show (``lines`` as ``visible`` takes it); any other as JSON text."""
    if isinstance(content, str):
        return writable(visible(content, lines=lines))
    return _json_text(content)


def _hidden(character: str, lines: bool) -> bool:
    if character.isprintable():  # every character of the categories above is not
        return False
    if (lines and character in "\t\n") or character in _ORDINARY_FORMAT:
        return False
    return unicodedata.category(character) in _HIDDEN


def _undecoded(character: str) -> int | None:
    """The byte of a name not text in the locale's encoding that ``character`` stands for
    (surrogateescape), else None."""
    code = ord(character) - _UNDECODED
    return code if _FIRST_UNDECODED <= code <= _BYTE else None


def _text_escape(character: str) -> str:
    code = ord(character)
    if (byte := _undecoded(character)) is not None:
        return f"\\x{byte:02x}"
    if code <= _BYTE:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= _BMP else f"\\U{code:08x}"


def _json_escape(character: str) -> str:
    code = ord(character)
    if code <= _BMP:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)  # JSON writes the UTF-16 surrogate pair
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"


_OWN_DESCRIPTOR = re.compile(r"/proc/(self|thread-self|\d+)/fd/(\d+)")
_LINKS_FOLLOWED = 40  # as the kernel's own limit, so that a loop of links ends


def descriptor_named(name: str) -> int | None:
    """The descriptor of this process that ``name`` designates (``/dev/stdout``, ``/dev/fd/3``,
    ``/proc/self/fd/3``, however spelled, or a link to one), else ``None``.

    Opening such a name opens the file behind the descriptor anew; replacing that file would
    lose what the shell set up (``3>>log`` appends). Links are followed one at a time, up to
    the name of the descriptor, which is itself a link to the file.
    """
    path = os.path.abspath(name)
    for _ in range(_LINKS_FOLLOWED):
        plain = "/" + os.path.normpath(path).lstrip("/")
        match = _OWN_DESCRIPTOR.fullmatch(plain)
        if match is not None:
            owner, descriptor = match.groups()
            mine = owner in ("self", "thread-self") or int(owner) == os.getpid()
            return int(descriptor) if mine else None
        parts = Path(plain).parts
        for end in range(2, len(parts) + 1):
            prefix = os.path.join(*parts[:end])
            if os.path.islink(prefix):
                target = os.path.join(os.path.dirname(prefix), os.readlink(prefix))
                path = os.path.join(target, *parts[end:])
                break
        else:
            return None
    return None


def plural(count: int, noun: str) -> str:
    """``count`` and ``noun``, with an ``s`` unless ``count`` is 1: "1 item", "2 items"."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` with every character a terminal would act on or not show written as its
    Python escape (``\\x1b``, ``\\u202e``, ``\\u200b``, ``\\U000e0041``), so stored data cannot move
    the cursor, retitle the window, reorder a line or hide text; ``lines=True`` keeps line
    breaks and tabs."""
    if text.isprintable():
        return text
    return "".join(_text_escape(c) if _hidden(c, lines) else c for c in text)


def visible_json(text: str) -> str:
    """The JSON text ``text`` with the same characters as ``visible`` written as JSON escapes
    (``\\u001b``, ``\\u200b``, ``\\udb40\\udc41``), so it stays valid JSON and means the same."""
    if text.isprintable():
        return text
    return "".join(_json_escape(c) if _hidden(c, False) else c for c in text)


def _json_text(value: Any) -> str:
    """``value`` as JSON text (spaces after ``:`` and ``,``, as a person reads it), safe to show."""
    return writable(visible_json(json.dumps(value, ensure_ascii=False)), json_text=True)


def _encodes(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def writable(text: str, *, json_text: bool = False) -> str:
    """``text`` with every character stdout's encoding cannot write (on an ASCII terminal) as its
    escape: ``\\xfc`` or, in JSON text (``json_text=True``), JSON's ``\\u00fc``, so the JSON
    shown stays JSON. A table is measured with the escapes, several cells each, in place."""
    encoding = sys.stdout.encoding
    if _encodes(text, encoding):
        return text
    escape = _json_escape if json_text else _text_escape
    return "".join(c if _encodes(c, encoding) else escape(c) for c in text)


def _moment(created_at: float) -> datetime | None:
    """The UTC time of ``created_at``, or ``None`` outside the years 1 to 9999 (milliseconds
    given as seconds, for example): any finite number is a valid ``created_at``."""
    try:
        return datetime.fromtimestamp(created_at, UTC)
    except (OverflowError, ValueError, OSError):
        return None


def _created(created_at: float) -> str:
    moment = _moment(created_at)
    return f"{created_at:.4g}" if moment is None else moment.strftime("%Y-%m-%d")


def _console() -> Any:
    require_extra("rich")
    from rich.console import Console

    console = _sized(Console(file=STDOUT, highlight=False, soft_wrap=False))
    # Never narrower than an id, its gap and one cell of content: a narrower terminal wraps
    # the lines, showing every id whole.
    console.width = max(console.width, _ID_WIDTH + _GAP + 1)
    return console


def _sized(console: Any) -> Any:
    """``console``, given its terminal's width where rich took ``COLUMNS=0`` for a terminal no
    column wide (it then prints nothing)."""
    if console.width < 1:
        try:
            console.width = os.get_terminal_size(console.file.fileno()).columns
        except (AttributeError, OSError, ValueError):
            console.width = shutil.get_terminal_size().columns  # 80 when it finds none
    return console


def write_all(stream: IO[bytes], data: bytes) -> None:
    """Write every byte of ``data`` to ``stream``. A large write may return short, without an
    error, when it reaches a file-size limit; writing the rest again raises the error. A
    non-blocking output (a pipe its reader made so) that is full is waited for."""
    view = memoryview(data)
    while view:
        try:
            written = stream.write(view)
        except BlockingIOError as error:  # a buffered stream: some bytes may have been taken
            view = view[error.characters_written :]
            _wait_until_writable(stream)
            continue
        if written is None:  # a raw stream that took nothing yet
            _wait_until_writable(stream)
            continue
        if not written:
            raise OSError(errno.EIO, "the output took none of the bytes written to it")
        view = view[written:]


def flush_all(stream: IO[bytes]) -> None:
    """Flush ``stream``, waiting while a non-blocking output is full."""
    while True:
        try:
            stream.flush()
        except BlockingIOError:
            _wait_until_writable(stream)
        else:
            return


def _wait_until_writable(stream: IO[bytes]) -> None:
    select.select([], [stream.fileno()], [])


def _shown(error: UnicodeError) -> tuple[str | bytes, int]:
    """Write what stdout's encoding cannot: a byte of a file name that is not text in the
    locale's encoding (which reached Python as a surrogate) as that byte, any other character
    as its escape."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    character = error.object[error.start]
    if (byte := _undecoded(character)) is not None:
        return bytes([byte]), error.start + 1
    return _text_escape(character), error.start + 1


_SHOWN = "lionmem-shown"
codecs.register_error(_SHOWN, _shown)


class _Stdout:
    """Standard output (whatever ``sys.stdout`` is when written) as a text stream that writes
    every byte of each write at once, in stdout's encoding, through ``write_all``: a full
    non-blocking output is waited for, where ``sys.stdout`` itself would raise
    ``BlockingIOError`` or lose what its buffer held."""

    @property
    def encoding(self) -> str:
        return sys.stdout.encoding

    def isatty(self) -> bool:
        return is_terminal(sys.stdout)

    def fileno(self) -> int:
        return sys.stdout.fileno()

    def write(self, text: str) -> int:
        stream = sys.stdout
        data = text.encode(stream.encoding, _SHOWN)
        stream.flush()  # anything written to sys.stdout itself goes first
        write_all(stream.buffer, data)
        flush_all(stream.buffer)
        return len(text)

    def flush(self) -> None:
        flush_all(sys.stdout.buffer)


# A cast, not a typing.IO subclass (whose every method is abstract): rich writes, flushes and
# asks isatty and encoding, which is all _Stdout has.
STDOUT = cast("IO[str]", _Stdout())


def say(text: object) -> None:
    """Write ``text`` and a line break to stdout, every byte (see ``STDOUT``)."""
    STDOUT.write(f"{text}\n")


def say_done(text: object, done: str | None = None, line: str = "this line") -> None:
    """Write ``text``, what a command reports of work it has done (``done`` says that work, where
    ``text`` does not); if stdout cannot take it, raise ``CommandError`` saying the work is done,
    so that it is not done again."""
    try:
        say(text)
    except BrokenPipeError:  # the reader went away: the command stops quietly, as for any output
        raise
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        msg = f"{done or text}, but standard output could not take {line}: {reason}"
        raise CommandError(msg) from exc


def write_json_lines(items: Iterable[MemoryItem]) -> int:
    """Write each item's ``model_dump_json()`` and a line break to stdout as UTF-8; return how many.

    Bytes, not text: JSON Lines are UTF-8 whatever the locale's encoding.
    """
    to_json = MemoryItem.__pydantic_serializer__.to_json
    lines = [to_json(item) + b"\n" for item in items]
    sys.stdout.flush()
    write_all(sys.stdout.buffer, b"".join(lines))
    flush_all(sys.stdout.buffer)
    return len(lines)


def print_items(items: Iterable[MemoryItem], *, json_lines: bool) -> int:
    """Print ``items`` as JSON Lines, or as one table on a terminal; return how many."""
    if json_lines or not is_terminal(sys.stdout):
        return write_json_lines(items)
    console = _console()
    from rich.cells import cell_len
    from rich.table import Table

    rows = [
        (
            str(item.id),
            _created(item.created_at),
            _one_line(", ".join(item.tags)),
            *_content_line(item.content),
        )
        for item in items
    ]
    # Every cell is cut to a width computed here, so the table is one line per item that fits the
    # terminal (rich's own shrinking would cut the ids first). The creation date is shown only
    # where there is room; tags give way to the content. The ids are whole at any width: on a
    # terminal too narrow for an id and a cell of content, rich narrows the content, and crops it
    # where stdout's encoding has no ``…`` (rich's would be written as its escape, six cells
    # where rich counted one).
    width: int = console.width - 1
    needed = max([len("tags")] + [cell_len(writable(visible(row[2]))) for row in rows])
    fixed = {"id": _ID_WIDTH, "created": _DATE_WIDTH}
    fixed["tags"] = min(_TAGS_WIDTH, needed, max(4, (width - _ID_WIDTH - 3 * _GAP) // 3))
    columns = ["id", "created", "tags", "content"]

    def room() -> int:  # what the content column gets beside the others
        return width - sum(fixed[name] for name in columns[:-1]) - _GAP * len(columns)

    if room() < _WIDE_CONTENT:
        columns.remove("created")
    if room() < _MIN_CONTENT:
        columns.remove("tags")
    tags_width = fixed["tags"]
    content_width = max(1, min(_CONTENT_WIDTH, room()))
    overflow: Literal["ellipsis", "crop"] = (
        "ellipsis" if _encodes("\u2026", sys.stdout.encoding) else "crop"
    )
    table = Table(box=None, header_style="bold", padding=(0, _GAP, 0, 0), show_edge=False)
    for name in columns:
        if name == "id":
            table.add_column(name, no_wrap=True, min_width=_ID_WIDTH)
        else:
            table.add_column(name, no_wrap=True, overflow=overflow)
    for item_id, created, tags, content, json_content in rows:
        cells = {
            "id": item_id,
            "created": created,
            "tags": _cut(tags, tags_width),
            "content": _cut(content, content_width, json_text=json_content),
        }
        table.add_row(*(cells[name] for name in columns))
    if rows:
        console.print(table)
    console.print(plural(len(rows), "item"))
    return len(rows)


_BREAKS = re.compile("[ \t\n\r]+")


def _one_line(text: str) -> str:
    """``text`` on one line: every run of spaces, tabs and line ends one space. Other characters
    Python counts as white space (``\x1c``, ``\x85``, ``\u2028``) stay, for ``visible`` to show."""
    return _BREAKS.sub(" ", text).strip(" ")


def _content_line(content: Any) -> tuple[str, bool]:
    """``content`` as one line, and whether that is JSON text: text content as ``_one_line``
    gives it, any other as JSON text (one line, its strings as stored)."""
    if isinstance(content, str):
        return _one_line(content), False
    return json.dumps(content, ensure_ascii=False), True


_DOTS = "..."


def _shown_as(character: str, *, json_text: bool) -> str:
    """``character`` as a table shows it: as ``visible`` and ``writable`` write it, in their
    JSON forms in JSON text."""
    if json_text:
        return writable(visible_json(character), json_text=True)
    return writable(visible(character))


def _cut(text: str, width: int, *, json_text: bool = False) -> Any:
    """``text`` (one line, ``json_text`` if JSON text) as shown, cut to ``width`` terminal cells
    between two of its characters, so no escape is cut in half, ending in an ellipsis, ``...``
    where stdout's encoding has no ``…``. A prefix is measured whole, as rich measures it
    (graphemes: ``❤️`` takes 2 cells, though its two characters take 1 and 0)."""
    from rich.cells import cell_len
    from rich.text import Text

    # More characters than this cannot fit unless most of them take no cell: they are cut anyway.
    head = text[: 8 * width + 8]
    shown = [_shown_as(character, json_text=json_text) for character in head]
    if len(head) == len(text) and cell_len("".join(shown)) <= width:
        return Text("".join(shown), no_wrap=True)
    dots = "\u2026" if _encodes("\u2026", sys.stdout.encoding) else _DOTS[:width]
    room = max(width - cell_len(dots), 0)
    fits = bisect.bisect_right(
        range(len(shown) + 1), room, key=lambda count: cell_len("".join(shown[:count]))
    )
    return Text("".join(shown[: fits - 1]) + dots, no_wrap=True)


def print_item(item: MemoryItem, *, json_lines: bool) -> None:
    """Print one item: JSON when piped or with ``--json``, every field in full on a terminal."""
    if json_lines or not is_terminal(sys.stdout):
        write_json_lines([item])
        return
    console = _console()
    from rich.table import Table
    from rich.text import Text

    table = Table(show_header=False, box=None, padding=(0, 1))
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    moment = _moment(item.created_at)
    when = "not a date between the years 1 and 9999" if moment is None else moment.isoformat()
    values = {
        "id": str(item.id),
        "created_at": f"{item.created_at!r} ({when})",
        "tags": _json_text(item.tags),
        "metadata": _json_text(item.metadata),
        # Only text content keeps its line breaks and tabs (JSON text escapes them).
        "content": _content_text(item.content, lines=True),
    }
    for field, value in values.items():
        # A Text, not a str: rich would read "[red]" or ":smile:" in stored text as markup.
        table.add_row(field, Text(value))
    console.print(table)


class ProgressBar:
    """A progress bar on stderr that appears once ``PROGRESS_AFTER`` units are done.

    ``total`` is in the same units as ``advance`` (lines, bytes or items), or ``None`` when not
    known. Nothing is drawn unless stderr is a terminal and ``enabled`` is true. ``advance``
    may be called from any thread.
    """

    def __init__(self, label: str, *, total: float | None, enabled: bool = True) -> None:
        self._label = label
        self._total = total
        self._enabled = enabled and is_terminal(sys.stderr)
        self._items = 0
        self._done = 0.0
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Self:
        return self

    def advance(self, items: int, amount: float | None = None) -> None:
        """Record ``items`` more items done (``amount`` more units of ``total`` if not items)."""
        self._items += items
        self._done += items if amount is None else amount
        if not self._enabled:
            return
        if self._progress is None:
            if self._items < PROGRESS_AFTER:
                return
            self._start()
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=self._done, items=self._items)

    def _start(self) -> None:
        if missing("rich"):
            self._enabled = False
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn(f"{self._label} {{task.fields[items]:,}} items"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%" if self._total else ""),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=_sized(Console(file=sys.stderr)),
            transient=False,
        )
        self._task = self._progress.add_task(self._label, total=self._total, items=0)
        self._progress.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            if exc is None and self._task is not None and self._total is not None:
                self._progress.update(self._task, completed=self._total, items=self._items)
            self._progress.stop()
