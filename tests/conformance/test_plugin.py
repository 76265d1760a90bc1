"""The pytest plugin: a ``memory_adapter_harness`` fixture turns into one test per conformance case.

This module is itself an adapter author's test module: the fixture below makes the plugin add
``TestMemoryAdapterConformance::test_conformance[<case>]`` here, so ``make test`` runs the whole
suite against the honest fake through pytest. The other tests run pytest in a subprocess on
small modules written to a temporary folder, as an author would.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lionmem.conformance import CASES, run_case
from lionmem.conformance.fake import FakeBehaviour, FakeHarness, declared_manifest
from lionmem.conformance.pytest_plugin import REUSED, SUITE_CLASS, _run_one
from tests.conformance.test_conformance import CloseHangsHarness, CloseRaisesHarness


@pytest.fixture
def memory_adapter_harness() -> FakeHarness:
    return FakeHarness()


def test_plugin_added_the_suite_beside_the_fixture() -> None:
    """Collecting this module put the suite class into it."""
    assert SUITE_CLASS in globals()


def test_plugin_runs_each_case_and_closes_the_harness() -> None:
    """The plugin's runner closes the harness after the case."""
    harness = FakeHarness()
    result = asyncio.run(_run_one(harness, "protocols", 0, 5))
    assert (result.status, harness.closed) == ("passed", True)


def test_close_that_raises_fails_the_case() -> None:
    """A close() that raises after a passing case fails it, naming the error."""
    result = asyncio.run(_run_one(CloseRaisesHarness(), "protocols", 0, 5))
    assert (result.status, result.reason) == (
        "failed",
        "the harness's close() raised RuntimeError: close failed",
    )


def test_close_that_hangs_fails_the_case_at_the_deadline() -> None:
    """close() is bounded by the case timeout."""
    result = asyncio.run(_run_one(CloseHangsHarness(), "protocols", 0, 5, 0.05))
    assert (result.status, result.reason) == (
        "failed",
        "the harness's close() did not finish within 0.05 s",
    )


def test_failed_close_after_a_failed_case_keeps_both_reasons() -> None:
    """A failed case keeps its reason, and the failed close() follows it."""
    late, claims = FakeBehaviour(eventual_search=True), declared_manifest()
    alone = asyncio.run(
        run_case(FakeHarness(late, manifest=claims), "search_visibility", seed=0, examples=5)
    )
    harness = CloseRaisesHarness(late, manifest=claims)
    result = asyncio.run(_run_one(harness, "search_visibility", 0, 5))
    assert (alone.status, result.status, result.reason) == (
        "failed",
        "failed",
        f"{alone.reason}; then the harness's close() raised RuntimeError: close failed",
    )


def _pytest(folder: Path, source: str, *options: str) -> subprocess.CompletedProcess[str]:
    (folder / "test_adapter.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-ra", "-p", "no:cacheprovider", *options],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


HONEST = """
    import pytest
    from lionmem.conformance.fake import FakeHarness

    @pytest.fixture
    def memory_adapter_harness():
        return FakeHarness()
"""
LYING = """
    import pytest
    from lionmem.conformance.fake import FakeBehaviour, FakeHarness, declared_manifest

    @pytest.fixture
    def memory_adapter_harness():
        return FakeHarness(FakeBehaviour(eventual_search=True), manifest=declared_manifest())
"""
NAMED = """
    import pytest
    from lionmem.conformance.fake import FakeHarness

    @pytest.fixture(name="memory_adapter_harness")
    def harness_fixture():
        return FakeHarness()
"""
PROXY = """
    class _Proxy:
        def __getattr__(self, name):
            raise RuntimeError("Working outside of application context.")

    current_app = _Proxy()

    def test_something():
        assert True
"""
IN_A_CLASS = """
    import pytest
    from lionmem.conformance.fake import FakeHarness

    class TestMyAdapter:
        @pytest.fixture
        def memory_adapter_harness(self):
            return FakeHarness()
"""
HANGING = """
    import asyncio

    import pytest
    from lionmem.conformance.fake import FakeHarness

    class Hanging(FakeHarness):
        async def reset(self):
            await asyncio.Event().wait()

    @pytest.fixture
    def memory_adapter_harness():
        return Hanging()
"""
REVERSED = """
    import pytest
    from lionmem.conformance.fake import FakeBehaviour, FakeHarness, declared_manifest

    @pytest.fixture
    def memory_adapter_harness():
        return FakeHarness(FakeBehaviour(reversed_search_order=True), manifest=declared_manifest())
"""


def test_one_fixture_gives_every_case_as_a_test(tmp_path: Path) -> None:
    """An author module with only the fixture collects one test per case."""
    run = _pytest(tmp_path, HONEST, "--collect-only")
    collected = [line for line in run.stdout.splitlines() if "::test_conformance[" in line]
    assert collected == [
        f"test_adapter.py::{SUITE_CLASS}::test_conformance[{case.name}]" for case in CASES
    ]


def test_a_fixture_named_with_name_gives_every_case_as_a_test(tmp_path: Path) -> None:
    """A fixture given its name with ``pytest.fixture(name=...)`` switches the suite on too."""
    run = _pytest(tmp_path, NAMED, "--collect-only")
    collected = [line for line in run.stdout.splitlines() if "::test_conformance[" in line]
    assert collected == [
        f"test_adapter.py::{SUITE_CLASS}::test_conformance[{case.name}]" for case in CASES
    ]


def test_a_module_object_whose_attributes_raise_is_collected_as_before(tmp_path: Path) -> None:
    """The plugin looks at every object of a test module for a fixture's name; one whose
    attributes raise (a proxy outside its context) breaks nothing."""
    run = _pytest(tmp_path, PROXY)
    assert (run.returncode, "1 passed" in run.stdout) == (0, True), run.stdout


def test_honest_fake_passes_under_pytest(tmp_path: Path) -> None:
    """The honest fake passes; the case that does not apply is skipped with the reason."""
    run = _pytest(tmp_path, HONEST)
    assert (
        run.returncode,
        "not applicable: the manifest lists no dropped_item_fields" in run.stdout,
    ) == (
        0,
        True,
    )


def test_lying_fake_fails_under_pytest_naming_the_claim(tmp_path: Path) -> None:
    """A lying fake fails the case that catches it, and pytest prints the broken claim."""
    run = _pytest(tmp_path, LYING)
    assert (
        run.returncode,
        f"FAILED test_adapter.py::{SUITE_CLASS}::test_conformance[search_visibility]" in run.stdout,
        "manifest claims search_consistency='immediate'" in run.stdout,
    ) == (1, True, True)


def test_two_modules_each_get_the_whole_suite(tmp_path: Path) -> None:
    """Two author modules in one run each get one test per case (no shared parametrization)."""
    (tmp_path / "test_second.py").write_text(textwrap.dedent(HONEST), encoding="utf-8")
    run = _pytest(tmp_path, HONEST, "--collect-only")
    assert sum("::test_conformance[" in line for line in run.stdout.splitlines()) == 2 * len(CASES)


def test_fixture_in_a_class_gets_the_suite_nested(tmp_path: Path) -> None:
    """A fixture defined in a test class gets the suite as a nested class."""
    run = _pytest(tmp_path, IN_A_CLASS, "--collect-only")
    assert (
        f"test_adapter.py::TestMyAdapter::{SUITE_CLASS}::test_conformance[protocols]" in run.stdout
    )


def test_seed_option_reaches_the_randomised_cases(tmp_path: Path) -> None:
    """--lionmem-seed sets the seed the reference profile reports."""
    run = _pytest(tmp_path, REVERSED, "--lionmem-seed", "5", "-k", "reference_search_profile")
    assert "repeat with run(harness, seed=5, cases=['reference_search_profile'])" in run.stdout


def test_timeout_option_bounds_each_case(tmp_path: Path) -> None:
    """--lionmem-timeout fails a case that does not finish in time."""
    run = _pytest(tmp_path, HANGING, "--lionmem-timeout", "0.05", "-k", "protocols")
    assert "the case did not finish within 0.05 s" in run.stdout


def test_explicit_plugin_option_does_not_register_it_twice(tmp_path: Path) -> None:
    """-p lionmem.conformance.pytest_plugin beside auto-loading still gives each case once."""
    run = _pytest(tmp_path, HONEST, "--collect-only", "-p", "lionmem.conformance.pytest_plugin")
    assert sum("::test_conformance[" in line for line in run.stdout.splitlines()) == len(CASES)


@pytest.mark.parametrize(
    ("option", "value", "problem"),
    [
        ("--lionmem-timeout", "nan", "must be a finite number of seconds, 0 or more"),
        ("--lionmem-timeout", "-1", "must be a finite number of seconds, 0 or more"),
        ("--lionmem-examples", "-5", "must be 0 or more, got -5"),
    ],
)
def test_out_of_range_options_are_usage_errors(
    tmp_path: Path, option: str, value: str, problem: str
) -> None:
    """The plugin reads its options as ``lionmem conformance`` does: a bad value runs nothing."""
    run = _pytest(tmp_path, HONEST, option, value)
    assert run.returncode == pytest.ExitCode.USAGE_ERROR
    assert f"argument {option}: {problem}" in run.stderr


MODULE_SCOPED = """
    import pytest
    from lionmem.conformance.fake import FakeHarness

    @pytest.fixture(scope="module")
    def memory_adapter_harness():
        return FakeHarness()
"""


def test_harness_reused_after_close_fails_saying_why(tmp_path: Path) -> None:
    """A module-scoped fixture hands the closed harness to the next case: that test fails, saying so."""
    run = _pytest(tmp_path, MODULE_SCOPED, "-k", "protocols or store_returns_item_id")
    assert (run.returncode, "1 failed, 1 passed" in run.stdout, REUSED in run.stdout) == (
        1,
        True,
        True,
    ), run.stdout


EQUAL_HARNESSES = """
    import gc

    import pytest
    from lionmem.conformance.fake import FakeHarness

    class Equal(FakeHarness):
        # Every instance equals every other, and a cycle keeps each alive until a collection.
        def __eq__(self, other):
            return isinstance(other, Equal)

        def __hash__(self):
            return 0

    @pytest.fixture
    def memory_adapter_harness():
        gc.disable()  # keep the closed harnesses alive, as a busy test session would
        harness = Equal()
        harness.me = harness
        return harness
"""


def test_a_new_harness_equal_to_a_closed_one_is_not_reused(tmp_path: Path) -> None:
    """The plugin tells a closed harness by identity: a new one that compares equal runs."""
    run = _pytest(tmp_path, EQUAL_HARNESSES, "-k", "protocols or store_returns_item_id")
    assert (run.returncode, "2 passed" in run.stdout) == (0, True), run.stdout


PLAIN_METHOD = """
    import pytest
    from lionmem.conformance.fake import FakeHarness

    class Plain(FakeHarness):
        def reset(self):
            pass

    @pytest.fixture
    def memory_adapter_harness():
        return Plain()
"""


def test_a_harness_with_a_plain_method_fails_each_test_naming_it(tmp_path: Path) -> None:
    """Under pytest too, a harness method that is not a coroutine fails the test, saying which."""
    run = _pytest(tmp_path, PLAIN_METHOD, "-k", "protocols")
    message = "Plain.reset is not a coroutine method (async def)"
    assert (run.returncode, "1 failed" in run.stdout, message in run.stdout) == (1, True, True), (
        run.stdout
    )
