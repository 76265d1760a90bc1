"""``validate``: documents checked against the shipped schemas, each problem with line and JSON path."""

from __future__ import annotations

import io
import json
import math
import sys
from pathlib import Path

import pytest

from lionmem import schemas
from lionmem.cli._validate import json_path
from tests.cli.support import clean_env, lionmem, on_terminal, one_line_error, vectors

SCHEMAS = ["element", "memory_adapter_manifest", "memory_item", "memory_query"]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_verdicts_agree_with_the_schema_vectors(tmp_path: Path, schema: str) -> None:
    """Every vector of the schema, one per line: exactly the invalid ones are reported, and a
    lone surrogate (written as its escape), which validate reports as not JSON lionmem reads."""
    found = vectors(schema)
    lines = [json.dumps(vector["document"], ensure_ascii=_lone(vector)) for vector in found]
    (tmp_path / "v.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = lionmem("validate", "--schema", schema, "v.jsonl", cwd=tmp_path)
    *problems, summary = result.stdout.splitlines()
    reported = {int(line.split(":")[1]) for line in problems}
    invalid = {
        number for number, vector in enumerate(found, 1) if not vector["valid"] or _lone(vector)
    }
    assert reported == invalid
    assert summary == f"v.jsonl: {len(found)} documents, {len(invalid)} invalid ({schema})"
    assert result.status == 1


def _lone(vector: dict[str, object]) -> bool:
    """Whether the vector's document holds a lone surrogate (UTF-8 cannot carry it)."""
    try:
        json.dumps(vector["document"], ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def test_valid_documents_exit_0(tmp_path: Path) -> None:
    """A file of valid documents prints only its summary and exits 0."""
    documents = [v["document"] for v in vectors("memory_query") if v["valid"]]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(d) + "\n" for d in documents))
    result = lionmem("validate", "--schema", "memory_query", "q.jsonl", cwd=tmp_path)
    assert (result.status, result.stdout) == (
        0,
        f"q.jsonl: {len(documents)} documents, 0 invalid (memory_query)\n",
    )


def test_a_json_document_names_the_line_of_each_problem(tmp_path: Path) -> None:
    """In a multi-line .json document each problem carries the line of the value at fault, in order."""
    (tmp_path / "item.json").write_text(
        "{\n"
        '  "content": "x",\n'
        '  "tags": [\n'
        '    "a",\n'
        "    2\n"
        "  ],\n"
        '  "metadata": {"a b": 1},\n'
        '  "created_at": "soon",\n'
        '  "colour": "red"\n'
        "}\n"
    )
    result = lionmem("validate", "item.json", cwd=tmp_path)
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            # Only the undeclared key: a refused created_at is reported where it stands.
            "item.json:1: $: Unevaluated properties are not allowed ('colour' was unexpected)",
            "item.json:5: $.tags[1]: 2 is not of type 'string'",
            "item.json:8: $.created_at: 'soon' is not of type 'number'",
            "item.json: 1 document, 1 invalid (memory_item)",
        ],
    )


def test_json_lines_problems_name_the_line_blank_lines_included(tmp_path: Path) -> None:
    """Lines are numbered as in the file (blank lines count); ``--schema`` takes a title too."""
    (tmp_path / "q.jsonl").write_text(
        '{"limit": 5}\n\n{"filters": {"a b": 1}, "limit": "x"}\n{"tags": [1]}\n'
    )
    result = lionmem("validate", "--schema", "MemoryQuery", "q.jsonl", cwd=tmp_path)
    assert result.stdout.splitlines() == [
        "q.jsonl:3: $.limit: 'x' is not of type 'integer'",
        "q.jsonl:4: $.tags[0]: 1 is not of type 'string'",
        "q.jsonl: 3 documents, 2 invalid (memory_query)",
    ]


@pytest.mark.parametrize(
    ("parts", "path"),
    [
        ([], "$"),
        (["tags", 0], "$.tags[0]"),
        (["a b", 2, "k"], '$["a b"][2].k'),
        (["ü"], "$.ü"),
        (['"'], '$["\\""]'),
        (["a\u202eb\u200b"], '$["a\\u202eb\\u200b"]'),  # shown as escapes, valid JSON still
        (["\x1b[2J"], '$["\\u001b[2J"]'),
    ],
)
def test_json_path_quotes_keys_that_are_not_names(parts: list[str | int], path: str) -> None:
    """Keys that are identifiers follow a dot; any other key is a JSON string in brackets."""
    assert json_path(parts) == path


def test_text_that_is_not_json_is_a_problem_on_its_line(tmp_path: Path) -> None:
    """A line (or a document) that does not parse is reported as not JSON, with its line."""
    (tmp_path / "bad.json").write_text('{\n  "content": "x",\n  "tags": [,]\n}\n')
    (tmp_path / "bad.jsonl").write_text('{"content": 1}\n{"content": \n')
    result = lionmem("validate", "bad.json", "bad.jsonl", cwd=tmp_path)
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            "bad.json:3: not JSON: Expecting value",
            "bad.json: 1 document, 1 invalid (memory_item)",
            "bad.jsonl:2: not JSON: Expecting value",
            "bad.jsonl: 2 documents, 1 invalid (memory_item)",
        ],
    )


def test_the_same_report_on_a_terminal(tmp_path: Path) -> None:
    """On a terminal ``validate`` prints the same lines as piped."""
    (tmp_path / "a.jsonl").write_text('{"tags": "x"}\n{"content": null}\n')
    piped = lionmem("validate", "a.jsonl", cwd=tmp_path)
    shown = on_terminal("validate", "a.jsonl", cwd=tmp_path)
    assert (
        shown.stdout
        == piped.stdout
        == (
            "a.jsonl:1: $.tags: 'x' is not of type 'array'\na.jsonl: 2 documents, 1 invalid (memory_item)\n"
        )
    )
    assert shown.status == piped.status == 1


def test_an_unknown_schema_exits_2_naming_the_schemas(tmp_path: Path) -> None:
    """``--schema`` must name a shipped schema (file name or title)."""
    (tmp_path / "a.json").write_text("{}")
    result = lionmem("validate", "--schema", "item", "a.json", cwd=tmp_path)
    assert one_line_error(result, "") == (
        f"lionmem validate: no lionmem schema named 'item'; available: {', '.join(sorted(schemas()))}"
    )


def test_a_missing_file_exits_2(tmp_path: Path) -> None:
    """A file that does not exist is named."""
    assert one_line_error(lionmem("validate", "nope.json", cwd=tmp_path), "") == (
        "lionmem validate: nope.json: no such file"
    )


def test_text_that_is_not_utf8_is_a_problem_of_its_document(tmp_path: Path) -> None:
    """A document (or a line) that is not UTF-8 is invalid, named with its line and byte."""
    (tmp_path / "latin1.json").write_bytes(b'{"content": "caf\xe9"}')
    (tmp_path / "mixed.jsonl").write_bytes(
        b'{"content": 1}\n{"content": "caf\xe9"}\n{"tags": []}\n'
    )
    result = lionmem("validate", "latin1.json", "mixed.jsonl", cwd=tmp_path)
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            "latin1.json:1: not UTF-8 text (invalid continuation byte at byte 16)",
            "latin1.json: 1 document, 1 invalid (memory_item)",
            "mixed.jsonl:2: not UTF-8 text (invalid continuation byte at byte 16)",
            "mixed.jsonl: 3 documents, 1 invalid (memory_item)",
        ],
    )


def test_a_directory_exits_2(tmp_path: Path) -> None:
    """A directory given as a file is named."""
    assert one_line_error(lionmem("validate", tmp_path, cwd=tmp_path), "") == (
        f"lionmem validate: {tmp_path} is a directory, not a JSON file"
    )


def test_a_document_of_another_suffix_is_json_or_json_lines(tmp_path: Path) -> None:
    """Without .json/.jsonl the file is one document if it parses as one, else JSON Lines."""
    (tmp_path / "one.txt").write_text('{\n  "tags": [3]\n}\n')
    (tmp_path / "lines.txt").write_text('{"tags": [3]}\n{"tags": []}\n')
    result = lionmem("validate", "one.txt", "lines.txt", cwd=tmp_path)
    assert result.stdout.splitlines() == [
        "one.txt:2: $.tags[0]: 3 is not of type 'string'",
        "one.txt: 1 document, 1 invalid (memory_item)",
        "lines.txt:1: $.tags[0]: 3 is not of type 'string'",
        "lines.txt: 2 documents, 1 invalid (memory_item)",
    ]


def test_a_deep_document_in_a_file_of_another_suffix_is_a_problem_not_a_crash(
    tmp_path: Path,
) -> None:
    """A file that is neither ``.json`` nor ``.jsonl``, starting with a document too deep to
    parse: read as JSON Lines, that line is a problem of its own and the next is checked."""
    deep = '{"content": "x", "metadata": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    (tmp_path / "one.txt").write_text(deep + "\n", encoding="utf-8")
    (tmp_path / "two.txt").write_text(deep + '\n{"content": "x", "tags": [1]}\n', encoding="utf-8")
    one = lionmem("validate", "one.txt", cwd=tmp_path)
    two = lionmem("validate", "two.txt", cwd=tmp_path)
    assert (one.status, one.stderr, one.stdout.splitlines()) == (
        1,
        "",
        ["one.txt:1: nested too deeply to check", "one.txt: 1 document, 1 invalid (memory_item)"],
    )
    assert (two.status, two.stderr, two.stdout.splitlines()) == (
        1,
        "",
        [
            "two.txt:1: nested too deeply to check",
            "two.txt:2: $.tags[0]: 1 is not of type 'string'",
            "two.txt: 2 documents, 2 invalid (memory_item)",
        ],
    )


def test_a_deep_document_over_several_lines_of_another_suffix_is_one_document(
    tmp_path: Path,
) -> None:
    """A pretty-printed document too deep to parse, in a file that is neither ``.json`` nor
    ``.jsonl``, is one document nested too deeply, not one document a line."""
    depth = 100_000
    deep = '{\n  "content": "x",\n  "metadata": {"a": ' + "[\n" * depth + "]\n" * depth + "}\n}\n"
    (tmp_path / "deep.txt").write_text(deep, encoding="utf-8")
    result = lionmem("validate", "deep.txt", cwd=tmp_path)
    assert (result.status, result.stderr, result.stdout.splitlines()) == (
        1,
        "",
        ["deep.txt:1: nested too deeply to check", "deep.txt: 1 document, 1 invalid (memory_item)"],
    )


def test_a_broken_document_over_several_lines_of_another_suffix_is_one_document(
    tmp_path: Path,
) -> None:
    """A pretty-printed document that is not JSON is one document, its problem on the line
    where it breaks; a file whose first line is a whole value is still JSON Lines."""
    (tmp_path / "one.txt").write_text('{\n  "content": "x"\n  "tags": []\n}\n')
    (tmp_path / "lines.txt").write_text('{"content": "a}\\"]"}\n{"tags": [1]\n')
    result = lionmem("validate", "one.txt", "lines.txt", cwd=tmp_path)
    assert (result.status, result.stderr, result.stdout.splitlines()) == (
        1,
        "",
        [
            "one.txt:3: not JSON: Expecting ',' delimiter",
            "one.txt: 1 document, 1 invalid (memory_item)",
            "lines.txt:2: not JSON: Expecting ',' delimiter",
            "lines.txt: 2 documents, 1 invalid (memory_item)",
        ],
    )


def test_a_broken_list_of_objects_over_several_lines_is_one_document(tmp_path: Path) -> None:
    """A pretty-printed list whose items are objects each on a line, indented or not, that is
    broken (a comma missing) is one document, its problem on the line where it breaks, not
    JSON Lines."""
    (tmp_path / "indented.txt").write_text('[\n  {"content": "a"}\n  {"content": "b"}\n]\n')
    (tmp_path / "flush.txt").write_text('[\n{"content": "a"}\n{"content": "b"}\n]\n')
    result = lionmem("validate", "indented.txt", "flush.txt", cwd=tmp_path)
    assert (result.status, result.stderr, result.stdout.splitlines()) == (
        1,
        "",
        [
            "indented.txt:3: not JSON: Expecting ',' delimiter",
            "indented.txt: 1 document, 1 invalid (memory_item)",
            "flush.txt:3: not JSON: Expecting ',' delimiter",
            "flush.txt: 1 document, 1 invalid (memory_item)",
        ],
    )


def test_json_lines_of_another_suffix_cut_in_their_first_line_are_json_lines(
    tmp_path: Path,
) -> None:
    """A JSON Lines file that is neither ``.json`` nor ``.jsonl`` whose first line is cut (a
    ``tail -c`` sample, a log rotated mid-line) is still read line by line: the cut line is a
    problem of its own and every other line is checked."""
    (tmp_path / "cut.log").write_text(
        'x"}\n{"content": "b", "tags": [1]}\n{"content": "c"}\n{"tags": 5}\n', encoding="utf-8"
    )
    (tmp_path / "rotated.log").write_text(
        'ags": ["a", {"b": 1}]}\n\n{"content": "c"}\n{"content": "d", "tags": [2]}\n',
        encoding="utf-8",
    )
    (tmp_path / "twice.log").write_text(
        'ntent": "a"}\n{"content": "b"\n{"content": "c"}\n', encoding="utf-8"
    )
    result = lionmem("validate", "cut.log", "rotated.log", "twice.log", cwd=tmp_path)
    assert (result.status, result.stderr, result.stdout.splitlines()) == (
        1,
        "",
        [
            "cut.log:1: not JSON: Expecting value",
            "cut.log:2: $.tags[0]: 1 is not of type 'string'",
            "cut.log:4: $.tags: 5 is not of type 'array'",
            "cut.log: 4 documents, 3 invalid (memory_item)",
            "rotated.log:1: not JSON: Expecting value",
            "rotated.log:4: $.tags[0]: 2 is not of type 'string'",
            "rotated.log: 3 documents, 2 invalid (memory_item)",
            "twice.log:1: not JSON: Expecting value",
            "twice.log:2: not JSON: Expecting ',' delimiter",
            "twice.log: 3 documents, 2 invalid (memory_item)",
        ],
    )


def test_a_document_nested_too_deeply_is_a_problem_on_its_line(tmp_path: Path) -> None:
    """A document nested deeper than the checker can follow is reported on its line as such;
    the documents around it are still checked."""
    deep = '{"content": "x", "metadata": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    # 900 levels parse on every Python the project supports (the limit is the interpreter's).
    nearly = '{"content": "x", "metadata": {"a": ' + '{"b": ' * 900 + "1" + "}" * 900 + "}}"
    lines = ['{"content": "fine"}', deep, nearly, '{"content": "fine", "tags": [1]}']
    (tmp_path / "deep.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = lionmem("validate", "deep.jsonl", cwd=tmp_path)
    assert (result.status, result.stderr) == (1, "")
    assert result.stdout.splitlines() == [
        "deep.jsonl:2: nested too deeply to check",
        "deep.jsonl:3: not JSON lionmem reads: nested too deeply (about 200 levels at most) "
        "at column 1230",
        "deep.jsonl:4: $.tags[0]: 1 is not of type 'string'",
        "deep.jsonl: 4 documents, 3 invalid (memory_item)",
    ]


def nested(levels: int) -> str:
    """An item whose content is a string inside ``levels`` lists."""
    return '{"content": ' + "[" * levels + '"x"' + "]" * levels + "}"


def test_what_import_cannot_read_is_a_problem_where_it_stands(tmp_path: Path) -> None:
    """Nesting and lone surrogate escapes that Python's parser reads but import's refuses are
    problems on their lines; the deepest item import reads is none."""
    lines = [
        nested(199),
        nested(200),
        '{"content": "a\\ud800b"}',
        '{"tags": ["ok", "\\udc00"]}',
        '{"metadata": {"pair \\ud83d\\ude00": 1}}',
    ]
    (tmp_path / "odd.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = lionmem("validate", "odd.jsonl", cwd=tmp_path)
    assert (result.status, result.stderr) == (1, "")
    assert result.stdout.splitlines() == [
        "odd.jsonl:2: not JSON lionmem reads: nested too deeply (about 200 levels at most) "
        "at column 213",
        "odd.jsonl:3: not JSON lionmem reads: a lone surrogate escape (\\ud800-\\udfff not in "
        "a pair) at column 21",
        "odd.jsonl:4: not JSON lionmem reads: a lone surrogate escape (\\ud800-\\udfff not in "
        "a pair) at column 23",
        "odd.jsonl: 5 documents, 3 invalid (memory_item)",
    ]
    imported = lionmem("import", "odd.jsonl", "--db", "odd.db", "--skip-invalid", cwd=tmp_path)
    assert imported.status == 1
    assert [line.split(":")[0:2] for line in imported.stderr.splitlines()] == [
        ["lionmem import", " line 2"],
        ["lionmem import", " line 3"],
        ["lionmem import", " line 4"],
    ]


def test_what_import_cannot_read_comes_first_and_the_schema_is_still_checked(
    tmp_path: Path,
) -> None:
    """A lone surrogate escape is reported first, at its column counted in characters (not the
    parser's UTF-8 bytes), and the document's schema problems follow."""
    (tmp_path / "odd.jsonl").write_text('{"tags": 5, "content": "ééé\\ud800"}\n', encoding="utf-8")
    result = lionmem("validate", "odd.jsonl", cwd=tmp_path)
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            "odd.jsonl:1: not JSON lionmem reads: a lone surrogate escape (\\ud800-\\udfff not "
            "in a pair) at column 34",
            "odd.jsonl:1: $.tags: 5 is not of type 'array'",
            "odd.jsonl: 1 document, 1 invalid (memory_item)",
        ],
    )


def test_a_pretty_document_import_cannot_read_is_a_problem_on_its_line(tmp_path: Path) -> None:
    """The line of the problem in a document written over several lines is the parser's."""
    (tmp_path / "query.json").write_text('{"text":\n  "\\udc00"}\n', encoding="utf-8")
    result = lionmem("validate", "--schema", "memory_query", "query.json", cwd=tmp_path)
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            "query.json:2: not JSON lionmem reads: a lone surrogate escape (\\ud800-\\udfff "
            "not in a pair) at column 9",
            "query.json: 1 document, 1 invalid (memory_query)",
        ],
    )


def test_a_byte_order_mark_at_the_start_of_a_file_is_not_a_problem(tmp_path: Path) -> None:
    """A UTF-8 byte-order mark that begins a file (of any kind) is skipped; one later in a
    JSON Lines file is still text that is not JSON, on its line."""
    bom = b"\xef\xbb\xbf"
    (tmp_path / "a.jsonl").write_bytes(bom + b'{"tags": [3]}\n' + bom + b'{"tags": []}\n')
    (tmp_path / "b.json").write_bytes(bom + b'{\n  "tags": [3]\n}\n')
    (tmp_path / "c.txt").write_bytes(bom + b'{"tags": []}\n')
    result = lionmem("validate", "a.jsonl", "b.json", "c.txt", cwd=tmp_path)
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            "a.jsonl:1: $.tags[0]: 3 is not of type 'string'",
            "a.jsonl:2: not JSON: Unexpected UTF-8 BOM (decode using utf-8-sig)",
            "a.jsonl: 2 documents, 2 invalid (memory_item)",
            "b.json:2: $.tags[0]: 3 is not of type 'string'",
            "b.json: 1 document, 1 invalid (memory_item)",
            "c.txt: 1 document, 0 invalid (memory_item)",
        ],
    )


def test_the_problems_of_a_line_come_in_the_order_of_their_values(tmp_path: Path) -> None:
    """Problems on one line are printed in the order their values stand in it (``[2]`` before
    ``[10]``), problems of the same value by message."""
    (tmp_path / "a.jsonl").write_text(
        json.dumps({"tags": ["a", "b", *range(2, 12)], "id": "x"}) + "\n"
    )
    result = lionmem("validate", "a.jsonl", cwd=tmp_path)
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            *(f"a.jsonl:1: $.tags[{i}]: {i} is not of type 'string'" for i in range(2, 12)),
            "a.jsonl:1: $.id: 'x' is not a 'uuid'",
            "a.jsonl: 1 document, 1 invalid (memory_item)",
        ],
    )


def test_a_key_given_twice_is_checked_and_located_by_its_last_value(tmp_path: Path) -> None:
    """Of a key given twice the last value counts, as JSON parsers keep it; its problems are
    located there, whatever the earlier value was."""
    (tmp_path / "twice.jsonl").write_text(
        '{"tags": 5, "tags": ["a", 1]}\n'
        '{"tags": "xx", "tags": [1]}\n'
        '{"tags": [[1]], "tags": 3, "content": "x", "tags": ["a", "b", 7]}\n'
    )
    (tmp_path / "twice.json").write_text(
        '{\n  "tags": [1, 2],\n  "content": "x",\n  "tags": [\n    "a",\n    3\n  ]\n}\n'
    )
    result = lionmem("validate", "twice.jsonl", "twice.json", cwd=tmp_path)
    assert (result.status, result.stderr, result.stdout.splitlines()) == (
        1,
        "",
        [
            "twice.jsonl:1: $.tags[1]: 1 is not of type 'string'",
            "twice.jsonl:2: $.tags[0]: 1 is not of type 'string'",
            "twice.jsonl:3: $.tags[2]: 7 is not of type 'string'",
            "twice.jsonl: 3 documents, 3 invalid (memory_item)",
            "twice.json:6: $.tags[1]: 3 is not of type 'string'",
            "twice.json: 1 document, 1 invalid (memory_item)",
        ],
    )


def test_every_problem_of_a_document_with_thousands_is_printed_on_its_line(
    tmp_path: Path,
) -> None:
    """A document with thousands of problems gets each on the line of its value, in order."""
    count = 3000
    tags = [f"t{i}" if i % 3 else i for i in range(count)]
    (tmp_path / "many.json").write_text(json.dumps({"content": "x", "tags": tags}, indent=1))
    result = lionmem("validate", "many.json", cwd=tmp_path)
    assert (result.status, result.stderr, result.stdout.splitlines()) == (
        1,
        "",
        [
            *(
                f"many.json:{i + 4}: $.tags[{i}]: {i} is not of type 'string'"
                for i in range(0, count, 3)
            ),
            "many.json: 1 document, 1 invalid (memory_item)",
        ],
    )


def test_numbers_json_has_not_are_problems_where_they_stand(tmp_path: Path) -> None:
    """NaN, Infinity, -Infinity and a number too large for a float are problems at their path
    and line, whatever the schema says of the value; the text ``"NaN"`` and a number too small
    for a float are not."""
    (tmp_path / "n.jsonl").write_text(
        '{"created_at": NaN, "metadata": {"s": Infinity, "t": [1, -Infinity]}}\n'
        '{"created_at": 1e400, "metadata": {"u": -1E+999}, "tags": [NaN]}\n'
        '{"content": "NaN", "metadata": {"small": 1e-400, "big": 1e308}}\n'
    )
    (tmp_path / "n.json").write_text(
        '{\n  "content": "x",\n  "metadata": {\n    "a": NaN\n  }\n}\n'
    )
    result = lionmem("validate", "n.jsonl", "n.json", cwd=tmp_path)
    suffix = "JSON has no NaN or Infinity"
    assert (result.status, result.stderr, result.stdout.splitlines()) == (
        1,
        "",
        [
            f"n.jsonl:1: $.created_at: NaN is not JSON: {suffix}",
            f"n.jsonl:1: $.metadata.s: Infinity is not JSON: {suffix}",
            f"n.jsonl:1: $.metadata.t[1]: -Infinity is not JSON: {suffix}",
            f"n.jsonl:2: $.created_at: 1e400 is too large a number (read as Infinity): {suffix}",
            f"n.jsonl:2: $.metadata.u: -1E+999 is too large a number (read as -Infinity): {suffix}",
            f"n.jsonl:2: $.tags[0]: NaN is not JSON: {suffix}",
            "n.jsonl:2: $.tags[0]: nan is not of type 'string'",
            "n.jsonl: 3 documents, 2 invalid (memory_item)",
            f"n.json:4: $.metadata.a: NaN is not JSON: {suffix}",
            "n.json: 1 document, 1 invalid (memory_item)",
        ],
    )


# Ids that uuid.UUID() reads (as int(..., 16) reads digits) but that are not the canonical form.
NOT_CANONICAL_IDS = [
    "\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668-1234-4234-8234-123456789abc",
    "\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18-1234-4234-8234-123456789abc",
    "123_4567-89ab-4def-8123-456789abcdef",
    " b9f3a52-6c1e-4c8a-9d55-2f1e7a3b4c5d",
    "+b9f3a52-6c1e-4c8a-9d55-2f1e7a3b4c5d",
]


def test_an_id_only_int_reads_as_hex_is_not_a_uuid(tmp_path: Path) -> None:
    """An id of other digits, an underscore, a space or a sign is a problem, as the MCP server and
    ajv see it; the canonical form in either case is not."""
    canonical = ["0b9f3a52-6c1e-4c8a-9d55-2f1e7a3b4c5d", "0B9F3A52-6C1E-4C8A-9D55-2F1E7A3B4C5D"]
    lines = [json.dumps({"id": value}, ensure_ascii=False) for value in NOT_CANONICAL_IDS]
    lines += [json.dumps({"id": value}) for value in canonical]
    (tmp_path / "ids.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = lionmem("validate", "--schema", "element", "ids.jsonl", cwd=tmp_path)
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            f"ids.jsonl:{number}: $.id: {value!r} is not a 'uuid'"
            for number, value in enumerate(NOT_CANONICAL_IDS, 1)
        ]
        + ["ids.jsonl: 7 documents, 5 invalid (element)"],
    )


def test_validate_and_the_mcp_tools_share_one_uuid_check() -> None:
    """The format checkers of ``validate`` and of every MCP tool hold ``uuid`` to one function."""
    from lionmem._formats import is_canonical_uuid
    from lionmem.cli._validate import _validator
    from lionmem.mcp._tools import MemoryTools
    from lionmem.stores.memory import InMemoryStore

    tools = MemoryTools(InMemoryStore())._validators
    validators = [_validator("element"), *tools.values()]
    assert (sorted(tools), [v.format_checker.checkers["uuid"][0] for v in validators]) == (
        ["memory_retrieve", "memory_search", "memory_store"],
        [is_canonical_uuid] * 4,
    )


def test_a_quoted_key_of_a_path_stays_json_on_an_ascii_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where stdout is ASCII, a key a path quotes has JSON's escapes (``\\u00fc``), not Python's;
    so is a key of letters stdout cannot write, quoted instead of dotted."""
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
    assert [
        json_path(["metadata", "a \u00fc\U0001f600", 0]),
        json_path(["metadata", "schl\u00fcssel"]),
    ] == ['$.metadata["a \\u00fc\\ud83d\\ude00"][0]', '$.metadata["schl\\u00fcssel"]']


@pytest.mark.parametrize(
    ("limit", "most"), [("4300", 4300), ("0", 4300), ("9000", 4300), ("1000", 1000)]
)
def test_an_integer_too_long_to_read_is_a_problem_where_it_stands(
    tmp_path: Path, limit: str, most: int
) -> None:
    """An integer of more digits than import reads (4300, whatever Python's limit), or than
    Python reads where its limit is lower, is a problem on its line and path, and the rest of
    the document is still checked."""
    (tmp_path / "big.json").write_text(
        '{"content": -' + "1" * 4301 + ',\n "created_at": ' + "2" * 5000 + ', "tags": [1]}\n'
    )
    env = clean_env(PYTHONINTMAXSTRDIGITS=limit)
    result = lionmem("validate", "big.json", cwd=tmp_path, env=env)
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            "big.json:1: $.content: an integer of 4301 digits is more than lionmem reads "
            f"({most} digits at most)",
            "big.json:2: $.created_at: an integer of 5000 digits is more than lionmem reads "
            f"({most} digits at most)",
            "big.json:2: $.tags[0]: 1 is not of type 'string'",
            "big.json: 1 document, 1 invalid (memory_item)",
        ],
    )
    imported = lionmem("import", "big.json", "--db", "big.db", cwd=tmp_path, env=env)
    assert imported.status != 0  # import refuses the integers validate refuses


def test_an_integer_too_long_under_a_key_given_again_is_a_problem(tmp_path: Path) -> None:
    """JSON keeps the later of two values of one key, but import refuses the document for the
    too-long integer of the earlier: validate reports it, on the document."""
    (tmp_path / "twice.jsonl").write_text('{"content": {"a": ' + "1" * 5000 + ', "a": 1}}\n')
    env = clean_env(PYTHONINTMAXSTRDIGITS="4300")
    result = lionmem("validate", "twice.jsonl", cwd=tmp_path, env=env)
    imported = lionmem("import", "twice.jsonl", "--db", "t.db", cwd=tmp_path, env=env)
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            "twice.jsonl:1: $: an integer of more than 4300 digits, under a key given again "
            "later, is more than lionmem reads",
            "twice.jsonl: 1 document, 1 invalid (memory_item)",
        ],
    )
    assert (imported.status, imported.stderr) == (
        1,
        "lionmem import: line 1: Invalid JSON: number out of range at line 1 column 4320; "
        "nothing was imported\n",
    )


def test_an_integer_import_reads_is_no_problem(tmp_path: Path) -> None:
    """An integer of 4300 digits is read (and imported) even where Python's limit is none."""
    (tmp_path / "ok.json").write_text('{"content": ' + "1" * 4300 + "}\n")
    env = clean_env(PYTHONINTMAXSTRDIGITS="0")
    result = lionmem("validate", "ok.json", cwd=tmp_path, env=env)
    imported = lionmem("import", "ok.json", "--db", "ok.db", cwd=tmp_path, env=env)
    assert (result.stdout, imported.status) == ("ok.json: 1 document, 0 invalid (memory_item)\n", 0)


def test_an_integer_too_long_for_python_is_itself_in_the_problems_around_it(
    tmp_path: Path,
) -> None:
    """Around an integer too long to read, the problems are true of the integer written: it
    is named by its length, and equal only to the same integer (for ``uniqueItems``)."""
    ones, twos = "1" * 5000, "2" * 5000
    (tmp_path / "root.jsonl").write_text(f"[{ones}]\n")
    (tmp_path / "filters.jsonl").write_text(
        f'{{"supported_filters": [{ones}, {twos}]}}\n{{"supported_filters": [{ones}, 0, {ones}]}}\n'
    )
    env = clean_env(PYTHONINTMAXSTRDIGITS="4300")
    root = lionmem("validate", "root.jsonl", cwd=tmp_path, env=env)
    filters = lionmem(
        "validate", "filters.jsonl", "--schema", "memory_adapter_manifest", cwd=tmp_path, env=env
    )
    unread = "an integer of 5000 digits is more than lionmem reads (4300 digits at most)"
    assert (root.status, root.stdout.splitlines()) == (
        1,
        [
            "root.jsonl:1: $: [<an integer of 5000 digits>] is not of type 'object'",
            f"root.jsonl:1: $[0]: {unread}",
            "root.jsonl: 1 document, 1 invalid (memory_item)",
        ],
    )
    assert [line for line in filters.stdout.splitlines() if "required" not in line] == [
        f"filters.jsonl:1: $.supported_filters[0]: {unread}",
        f"filters.jsonl:1: $.supported_filters[1]: {unread}",
        "filters.jsonl:2: $.supported_filters: [<an integer of 5000 digits>, 0, "
        "<an integer of 5000 digits>] has non-unique elements",
        f"filters.jsonl:2: $.supported_filters[0]: {unread}",
        "filters.jsonl:2: $.supported_filters[1]: 0 is not of type 'string'",
        f"filters.jsonl:2: $.supported_filters[2]: {unread}",
        "filters.jsonl: 2 documents, 2 invalid (memory_adapter_manifest)",
    ]


def test_an_integer_too_long_for_python_orders_as_the_integer_written() -> None:
    """It sorts among numbers as its value would (``uniqueItems`` sorts before comparing)."""
    from lionmem.cli._validate import _Unread

    big, bigger, small, smaller = (
        _Unread(sign + digit * 5000)
        for sign, digit in (("", "1"), ("", "2"), ("-", "1"), ("-", "2"))
    )
    numbers = [bigger, 0, -math.inf, small, 2.5, big, math.inf, smaller, -7]
    assert sorted(numbers) == [-math.inf, smaller, small, -7, 0, 2.5, big, bigger, math.inf]
    assert [big == _Unread("1" * 5000), big == 0, hash(big) == hash(_Unread("1" * 5000))] == [
        True,
        False,
        True,
    ]


def test_a_document_of_another_root_type_is_one_problem(tmp_path: Path) -> None:
    """A line that is an array, a number or a string instead of an object is reported once."""
    (tmp_path / "root.jsonl").write_text('[1]\n5\n"x"\n{"content": 1}\n')
    result = lionmem("validate", "root.jsonl", cwd=tmp_path)
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            "root.jsonl:1: $: [1] is not of type 'object'",
            "root.jsonl:2: $: 5 is not of type 'object'",
            "root.jsonl:3: $: 'x' is not of type 'object'",
            "root.jsonl: 4 documents, 3 invalid (memory_item)",
        ],
    )


def test_a_created_at_with_no_float_value_is_a_problem_as_import_finds(tmp_path: Path) -> None:
    """An integer past the largest double has no float value: validate refuses it, as import
    does; an infinity is reported once, as a number JSON has not, not again for its bounds."""
    huge = "1" + "0" * 400
    (tmp_path / "t.jsonl").write_text(
        f'{{"content": 1, "created_at": {huge}}}\n'
        f'{{"content": 1, "created_at": -{huge}}}\n'
        '{"content": 1, "created_at": 1e400}\n'
        '{"content": 1, "created_at": 1.7976931348623157e308}\n'
    )
    result = lionmem("validate", "t.jsonl", cwd=tmp_path)
    largest = "1.7976931348623157e+308"
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            f"t.jsonl:1: $.created_at: {huge} is greater than the maximum of {largest}",
            f"t.jsonl:2: $.created_at: -{huge} is less than the minimum of -{largest}",
            "t.jsonl:3: $.created_at: 1e400 is too large a number (read as Infinity): JSON has "
            "no NaN or Infinity",
            "t.jsonl: 4 documents, 3 invalid (memory_item)",
        ],
    )
    imported = lionmem("import", "--db", "m.db", "--skip-invalid", "t.jsonl", cwd=tmp_path)
    assert (imported.status, imported.stdout.splitlines()[-1:]) == (
        1,
        ["imported 1 item from t.jsonl (3 invalid lines skipped)"],
    )


def test_only_undeclared_keys_are_unexpected(tmp_path: Path) -> None:
    """A declared key whose value is refused (``id`` and ``created_at``, declared by the Element
    schema MemoryItem extends) is reported at its value, not as an unexpected key as well."""
    (tmp_path / "k.jsonl").write_text(
        '{"id": "x", "created_at": "soon", "content": 1}\n'
        '{"id": "x", "content": 1, "zz": 1, "aa": 2}\n'
    )
    result = lionmem("validate", "k.jsonl", cwd=tmp_path)
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            "k.jsonl:1: $.id: 'x' is not a 'uuid'",
            "k.jsonl:1: $.created_at: 'soon' is not of type 'number'",
            "k.jsonl:2: $: Unevaluated properties are not allowed ('aa', 'zz' were unexpected)",
            "k.jsonl:2: $.id: 'x' is not a 'uuid'",
            "k.jsonl: 2 documents, 2 invalid (memory_item)",
        ],
    )


def test_an_item_nested_deeper_than_a_store_keeps_is_a_problem_as_import_finds(
    tmp_path: Path,
) -> None:
    """Content or metadata nesting 200 levels (a document of 201, which the parser reads) is
    refused by validate where it stands, as import refuses it; 199 levels pass both. A key no
    item has is refused as unexpected, not for its depth."""

    def nested(levels: int) -> str:
        return "[" * levels + "]" * levels

    lines = [
        f'{{"content": {nested(199)}, "colour": {nested(200)}}}',
        f'{{"content": {nested(200)}}}',
        f'{{"content": 1,\n "metadata": {{"a": {nested(198)}}}}}',
        f'{{"content": 1,\n "metadata": {{"a": {nested(199)}}}}}',
    ]
    for number, line in enumerate(lines):
        (tmp_path / f"{number}.json").write_text(line + "\n")
    result = lionmem("validate", *(f"{n}.json" for n in range(4)), cwd=tmp_path)
    why = "nested deeper than an item lionmem stores (lists and dicts in content or metadata nest at most 199 levels)"
    assert (result.status, result.stdout.splitlines()) == (
        1,
        [
            # A key no item has is the schema's to refuse, however deep its value.
            "0.json:1: $: Unevaluated properties are not allowed ('colour' was unexpected)",
            "0.json: 1 document, 1 invalid (memory_item)",
            "1.json:1: $.content" + "[0]" * 199 + f": {why}",
            "1.json: 1 document, 1 invalid (memory_item)",
            "2.json: 1 document, 0 invalid (memory_item)",
            "3.json:2: $.metadata.a" + "[0]" * 198 + f": {why}",
            "3.json: 1 document, 1 invalid (memory_item)",
        ],
    )
    for number, status in enumerate([1, 1, 0, 1]):
        line = lines[number].replace("\n", "") + "\n"
        (tmp_path / f"{number}.jsonl").write_text(line)
        imported = lionmem("import", "--db", f"{number}.db", f"{number}.jsonl", cwd=tmp_path)
        assert imported.status == status, imported.stderr
