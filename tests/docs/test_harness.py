"""The documentation harness itself: it fails on wrong output, unshown output, errors, broken links
and failing commands, and runs what it promises (top-level await, one namespace per page)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.docs import test_examples
from tests.docs.test_examples import (
    blocks,
    broken_links,
    expected_output,
    inject,
    run_console_blocks,
    run_python_blocks,
)

FENCE = "```"


def page(tmp_path: Path, text: str) -> Path:
    """Write ``text`` (with ``~~~`` standing for a fence) as a Markdown page in ``tmp_path``."""
    path = tmp_path / "page.md"
    path.write_text(text.replace("~~~", FENCE), encoding="utf-8")
    return path


def test_trailing_comments_are_the_output_and_other_comments_are_not() -> None:
    text = "# a heading comment\nprint(1)  # inline\nprint(2)\n# 1\n#\n# 2\n"
    assert expected_output(text) == ["1", "", "2"]
    assert expected_output("x = 1\n# a comment\ny = 2\n") == []


def test_blocks_of_one_page_share_a_namespace_and_may_await(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (
        "Intro.\n\n~~~python\nimport asyncio\nvalue = await asyncio.sleep(0, result=41)\n~~~\n\n"
        "- in a list:\n\n  ~~~python\n  print(value + 1)\n  # 42\n  ~~~\n\n"
        "~~~sh\nnot python\n~~~\n"
    )
    namespace: dict[str, object] = {}
    assert run_python_blocks(page(tmp_path, source), namespace, capsys) == 2
    assert namespace["value"] == 41
    assert [block.line for block in blocks(tmp_path / "page.md", "python")] == [4, 11]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("print('yes')\n# no\n", "page.md:2"),  # wrong output
        ("print('unshown')\n", "page.md:2"),  # output the page does not show
        ("# shown\n", "page.md:2"),  # output the block does not print
    ],
)
def test_output_other_than_shown_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, message: str
) -> None:
    with pytest.raises(AssertionError, match=message):
        run_python_blocks(page(tmp_path, f"~~~python\n{body}~~~\n"), {}, capsys)


def test_an_error_in_a_block_fails_with_the_page_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = page(tmp_path, "Text.\n\n~~~python\nx = 1\nraise LookupError(x)\n~~~\n")
    with pytest.raises(LookupError) as raised:
        run_python_blocks(path, {}, capsys)
    assert raised.traceback[-1].lineno + 1 == 5  # pytest counts from 0
    assert str(raised.traceback[-1].path) == str(path)


def test_console_commands_must_succeed_and_print_what_follows(tmp_path: Path) -> None:
    good = page(tmp_path, "~~~console\n$ python -c 'print(1); print(2)'\n1\n2\n$ python -V\n~~~\n")
    version = f"Python {sys.version_info.major}.{sys.version_info.minor}"
    with pytest.raises(AssertionError, match=r"\$ python -V"):
        run_console_blocks(good, tmp_path)  # python -V prints its version, not nothing
    good.write_text(
        good.read_text().replace(
            "$ python -V\n", f"$ python -c 'print(\"{version}\")'\n{version}\n"
        )
    )
    assert run_console_blocks(good, tmp_path) == 2
    failing = page(tmp_path, "~~~console\n$ python -c 'raise SystemExit(3)'\n~~~\n")
    with pytest.raises(AssertionError, match="SystemExit"):
        run_console_blocks(failing, tmp_path)


def test_console_output_before_a_command_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="output before any"):
        run_console_blocks(page(tmp_path, "~~~console\norphan\n~~~\n"), tmp_path)


def test_broken_relative_links_and_anchors_are_reported(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# Top\n## The `Store`, again!\n## Top\n", encoding="utf-8")
    source = (
        "# Here\n[ok](there.md#the-store-again) [dup](there.md#top-1) [web](https://e.org/x.md)\n"
        "[self](#here) [gone](missing.md) [no heading](there.md#nowhere) [no self](#there)\n"
        "~~~python\n# [in code](ignored.md)\n~~~\n"
    )
    assert broken_links(page(tmp_path, source)) == ["missing.md", "there.md#nowhere", "#there"]


def test_injected_names_come_from_the_fixtures_the_table_names(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = page(tmp_path, "~~~python\nprint(where == here)\n# True\n~~~\n")
    monkeypatch.setattr(test_examples, "INJECTED", {"page.md": {"where": "tmp_path"}})
    namespace: dict[str, object] = {"here": tmp_path}
    inject(path, namespace, request)
    assert namespace["where"] == tmp_path
    assert run_python_blocks(path, namespace, capsys) == 1
    monkeypatch.setattr(test_examples, "INJECTED", {})
    with pytest.raises(NameError, match="where"):
        run_python_blocks(path, {"here": tmp_path}, capsys)
