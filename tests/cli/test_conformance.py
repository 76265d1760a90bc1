"""``python -m lionmem conformance MODULE:FACTORY [--json FILE]``: table, JSON report, exit status."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lionmem.cli import main
from lionmem.conformance import CASES, ConformanceReport

HONEST = "lionmem.conformance.fake:FakeHarness"
FACTORIES = """
    from lionmem.conformance.fake import FakeBehaviour, FakeHarness, declared_manifest

    def lying():
        return FakeHarness(FakeBehaviour(tagless_search_hits=True), manifest=declared_manifest())

    async def honest_async():
        return FakeHarness()

    def not_a_harness():
        return 42

    class PlainReset(FakeHarness):
        def reset(self):
            pass

    PLAIN_HOOK = PlainReset()

    class Hanging(FakeHarness):
        async def reset(self):
            import asyncio

            await asyncio.Event().wait()

    HARNESS = FakeHarness()

    def broken():
        raise RuntimeError("no credentials for the service")

    async def broken_async():
        raise KeyError("region")

    def exits():
        raise SystemExit(0)

    class ExitsInReset(FakeHarness):
        async def reset(self):
            raise SystemExit(0)

    async def _exit():
        raise SystemExit(0)

    class CloseRaises(FakeHarness):
        async def close(self):
            raise RuntimeError("close failed")

    class CloseHangs(FakeHarness):
        async def close(self):
            import asyncio

            await asyncio.Event().wait()

    class ExitsInATask(FakeHarness):
        async def reset(self):
            import asyncio

            await asyncio.wait_for(_exit(), 5)
"""


@pytest.fixture
def factories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Write a module of harness factories and make it importable; return its name."""
    (tmp_path / "cli_factories.py").write_text(textwrap.dedent(FACTORIES), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "cli_factories"


def test_honest_fake_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    """A passing adapter exits 0 and the table ends with the counts."""
    status = main(["conformance", HONEST])
    assert (status, capsys.readouterr().out.splitlines()[-1]) == (
        0,
        "25 passed, 0 failed, 1 not applicable",
    )


def test_table_has_a_line_per_case(capsys: pytest.CaptureFixture[str]) -> None:
    """The printed table has one line per case."""
    main(["conformance", HONEST])
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith(("  passed ", "  FAILED ", "  n/a ")) for line in lines) == len(
        CASES
    )


def test_json_report_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json FILE writes the report, which loads back as a passing ConformanceReport."""
    target = tmp_path / "report.json"
    main(["conformance", HONEST, "--json", str(target)])
    report = ConformanceReport.model_validate_json(target.read_text(encoding="utf-8"))
    assert (
        report.ok,
        len(report.results),
        f"report written to {target}" in capsys.readouterr().out,
    ) == (
        True,
        len(CASES),
        True,
    )


def test_lying_adapter_exits_one_naming_the_claim(
    factories: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failing adapter exits 1 and the table shows the broken claim."""
    status = main(["conformance", f"{factories}:lying"])
    out = capsys.readouterr().out
    assert (status, "FAILED  search_hit_tags" in out, "search_returns_tags=True" in out) == (
        1,
        True,
        True,
    )


def test_async_factory_is_awaited(factories: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A coroutine function factory is called and awaited."""
    assert main(["conformance", f"{factories}:honest_async", "--case", "protocols"]) == 0


def test_harness_object_is_used_as_is(factories: str, capsys: pytest.CaptureFixture[str]) -> None:
    """MODULE:NAME may name a harness object instead of a factory."""
    assert main(["conformance", f"{factories}:HARNESS", "--case", "protocols"]) == 0


def test_case_option_selects_cases(capsys: pytest.CaptureFixture[str]) -> None:
    """--case runs only the named cases."""
    main(["conformance", HONEST, "--case", "protocols", "--case", "limit_positive"])
    assert capsys.readouterr().out.splitlines()[-1] == "2 passed, 0 failed, 0 not applicable"


def test_seed_option_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    """--seed is the seed the table's header names."""
    main(["conformance", HONEST, "--seed", "42", "--case", "protocols"])
    assert ", seed 42, " in capsys.readouterr().out.splitlines()[0]


def test_timeout_option_bounds_each_case(
    factories: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--timeout fails a case that does not finish in time, with the limit in the reason."""
    status = main(
        ["conformance", f"{factories}:Hanging", "--timeout", "0.05", "--case", "protocols"]
    )
    assert (status, "the case did not finish within 0.05 s" in capsys.readouterr().out) == (1, True)


def test_close_that_raises_is_reported_with_the_table_and_json(
    factories: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A harness whose close() raises: the table and the JSON report say so, and the exit is 1."""
    target = tmp_path / "report.json"
    status = main(
        ["conformance", f"{factories}:CloseRaises", "--case", "protocols", "--json", str(target)]
    )
    lines = capsys.readouterr().out.splitlines()
    report = ConformanceReport.model_validate_json(target.read_text(encoding="utf-8"))
    assert (status, lines[-5:], report.close_failure) == (
        1,
        [
            "  FAILED  harness close()",
            "          the harness's close() raised RuntimeError: close failed",
            "",
            "1 passed, 0 failed, 0 not applicable; the harness's close() failed",
            f"report written to {target}",
        ],
        "the harness's close() raised RuntimeError: close failed",
    )


def test_timeout_option_bounds_close(factories: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--timeout bounds the harness's close() too: one that hangs is reported, the exit is 1."""
    status = main(
        ["conformance", f"{factories}:CloseHangs", "--timeout", "0.05", "--case", "protocols"]
    )
    assert (status, capsys.readouterr().out.splitlines()[-3:]) == (
        1,
        [
            "          the harness's close() did not finish within 0.05 s",
            "",
            "1 passed, 0 failed, 0 not applicable; the harness's close() failed",
        ],
    )


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("lionmem.conformance.fake", "expected MODULE:FACTORY, got 'lionmem.conformance.fake'"),
        ("no_such_module_xyz:make", "cannot import 'no_such_module_xyz'"),
        ("lionmem.conformance.fake:Nope", "'lionmem.conformance.fake' has no attribute 'Nope'"),
        ("lionmem.conformance.fake:FAKE_ADAPTER", "is neither a harness nor a callable"),
    ],
)
def test_bad_target_exits_two(
    target: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A target that gives no harness exits 2 with the reason on stderr."""
    status = main(["conformance", target])
    assert (status, message in capsys.readouterr().err) == (2, True)


@pytest.mark.parametrize("factory", ["PlainReset", "PLAIN_HOOK"])
def test_a_harness_with_a_plain_method_exits_two_naming_it(
    factories: str, factory: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A harness whose method is not a coroutine (made by a factory or given as is) exits 2
    with one line naming the method, before any case runs."""
    status = main(["conformance", f"{factories}:{factory}"])
    captured = capsys.readouterr()
    assert (status, captured.out, captured.err) == (
        2,
        "",
        f"lionmem conformance: {factories}:{factory}: PlainReset.reset is not a coroutine "
        "method (async def): the suite awaits every harness method\n",
    )


def test_factory_returning_no_harness_exits_two(
    factories: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A factory that returns something else exits 2 naming what it returned."""
    status = main(["conformance", f"{factories}:not_a_harness"])
    assert (
        status,
        "returned a value of type int, not a MemoryAdapterHarness" in capsys.readouterr().err,
    ) == (
        2,
        True,
    )


def test_unknown_case_exits_two(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown --case name exits 2 naming the known cases."""
    status = main(["conformance", HONEST, "--case", "nope"])
    assert (status, "no conformance case named 'nope'" in capsys.readouterr().err) == (2, True)


def test_module_entry_point_runs_the_suite(tmp_path: Path) -> None:
    """``python -m lionmem conformance`` works from a shell, from any directory."""
    run = subprocess.run(
        [sys.executable, "-m", "lionmem", "conformance", HONEST, "--case", "protocols"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (run.returncode, run.stdout.splitlines()[-1]) == (
        0,
        "1 passed, 0 failed, 0 not applicable",
    )


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        ("broken", "broken() raised RuntimeError: no credentials for the service"),
        ("broken_async", "broken_async() raised KeyError: 'region'"),
        ("exits", "exits() raised SystemExit: 0"),
    ],
)
def test_factory_that_raises_exits_two_naming_the_error(
    factories: str, factory: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A factory (sync or async) that raises is a harness that cannot be loaded: exit 2, one line."""
    status = main(["conformance", f"{factories}:{factory}"])
    captured = capsys.readouterr()
    assert (status, captured.out) == (2, "")
    assert captured.err == f"lionmem conformance: {factories}:{message}\n"


def test_module_that_raises_at_import_exits_two_naming_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A harness module whose import raises something other than ImportError exits 2 too."""
    (tmp_path / "cli_broken_module.py").write_text(
        'raise ValueError("bad setting")\n', encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    status = main(["conformance", "cli_broken_module:make"])
    captured = capsys.readouterr()
    assert (status, captured.out) == (2, "")
    assert captured.err == (
        "lionmem conformance: cannot import 'cli_broken_module': "
        "importing it raised ValueError: bad setting\n"
    )


def test_module_that_exits_at_import_exits_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """sys.exit(0) in a harness module is no harness, never a pass."""
    (tmp_path / "cli_exiting_module.py").write_text("raise SystemExit(0)\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["conformance", "cli_exiting_module:make"]) == 2
    assert capsys.readouterr().err == (
        "lionmem conformance: cannot import 'cli_exiting_module': "
        "importing it raised SystemExit: 0\n"
    )


@pytest.mark.parametrize("harness", ["ExitsInReset", "ExitsInATask"])
def test_a_harness_exiting_during_the_run_exits_two(
    factories: str, harness: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """SystemExit from the harness, in the suite's task or in one of its own, is no pass."""
    assert main(["conformance", f"{factories}:{harness}", "--case", "protocols"]) == 2
    assert capsys.readouterr().err == (
        "lionmem conformance: the harness raised SystemExit(0) while the suite ran; no report\n"
    )


@pytest.mark.parametrize(
    ("option", "value", "reason"),
    [
        (
            "--timeout",
            "nan",
            "must be a finite number of seconds, 0 or more (0: no limit), got 'nan'",
        ),
        (
            "--timeout",
            "inf",
            "must be a finite number of seconds, 0 or more (0: no limit), got 'inf'",
        ),
        (
            "--timeout",
            "-1",
            "must be a finite number of seconds, 0 or more (0: no limit), got '-1'",
        ),
        ("--timeout", "soon", "invalid float value: 'soon'"),
        ("--examples", "-5", "must be 0 or more, got -5"),
        ("--examples", "many", "invalid int value: 'many'"),
    ],
)
def test_out_of_range_options_are_usage_errors(
    option: str, value: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A timeout that is not a finite number of seconds (0 or more) and a negative number of
    examples are refused before anything runs: exit 2, the reason on stderr."""
    status = main(["conformance", HONEST, option, value, "--case", "protocols"])
    captured = capsys.readouterr()
    assert (status, captured.out) == (2, "")
    assert captured.err.splitlines()[-1] == (
        f"lionmem conformance: error: argument {option}: {reason}"
    )
