"""``lionmem mcp``'s arguments: what is refused before anything is opened, and the missing extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lionmem import InMemoryStore
from lionmem.cli import main
from lionmem.mcp import HttpAddress, create_server, http_app, parse_address
from lionmem.mcp._bounds import min_response_bytes
from lionmem.mcp._http import check_exposure, is_loopback

SMALLEST = min_response_bytes()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["--http", "8000"],
            "expected HOST:PORT (for example 127.0.0.1:8000), got '8000'",
        ),
        (
            ["--http", "::1:8000"],
            "write an IPv6 address in brackets, as in [::1]:8000, got '::1:8000'",
        ),
        (
            ["--http", "127.0.0.1:http"],
            "the port must be a number from 0 to 65535, got 'http' in '127.0.0.1:http'",
        ),
        (
            ["--http", "127.0.0.1:70000"],
            "the port must be a number from 0 to 65535, got '70000' in '127.0.0.1:70000'",
        ),
        (
            ["--max-limit", "-1"],
            "the maximum search limit must be 0 or more, got -1",
        ),
        (
            ["--max-limit", "1000", "--max-bytes", "4096"],
            "a response cap of 4096 bytes is too small for a maximum search limit of 1000: at "
            "least 161224 bytes are needed to list every hit left out",
        ),
        (
            ["--max-limit", "10", "--max-bytes", "2824"],
            f"a response cap of 2824 bytes is too small: it must be at least {SMALLEST}, or the "
            "server's answer to tools/list (its tools and their schemas) does not fit",
        ),
        (
            ["--max-limit", "10", "--max-bytes", "2000"],
            f"a response cap of 2000 bytes is too small: it must be at least {SMALLEST}, or the "
            "server's answer to tools/list (its tools and their schemas) does not fit",
        ),
        (
            ["--http", "127.0.0.1:0", "--max-limit", "0", "--max-bytes", str(SMALLEST - 1)],
            f"a response cap of {SMALLEST - 1} bytes is too small: it must be at least "
            f"{SMALLEST}, or the server's answer to tools/list (its tools and their schemas) "
            "does not fit",
        ),
        (
            ["--max-request-bytes", "1023"],
            "a request cap of 1023 bytes is too small: it must be at least 1024, or a client's "
            "ordinary requests (a few hundred bytes) are refused",
        ),
        (
            ["--http", "127.0.0.1:0", "--max-request-bytes", "0"],
            "a request cap of 0 bytes is too small: it must be at least 1024, or a client's "
            "ordinary requests (a few hundred bytes) are refused",
        ),
        (
            ["--http", "127.0.0.1:0", "--token", "  "],
            "the bearer token is empty; give a secret or none",
        ),
        (
            ["--http", "127.0.0.1:0", "--token", " secret"],
            "the bearer token starts or ends with whitespace (a space, a tab, a newline), which "
            "a client cannot send in its Authorization header; give it without",
        ),
        (
            ["--http", "127.0.0.1:0", "--token", "s\u00e9cr\x7fet"],
            "the bearer token holds '\\x7f', '\u00e9', which an HTTP header does not carry as "
            "such; use printable ASCII characters only",
        ),
        (
            ["--http", "127.0.0.1:0", "--allow-origin", "app.example"],
            "not an origin (scheme://host[:port]): 'app.example'",
        ),
        (
            ["--token", "secret"],
            "--token and --allow-origin apply to HTTP only: add --http HOST:PORT",
        ),
        (
            ["--allow-origin", "https://app.example"],
            "--token and --allow-origin apply to HTTP only: add --http HOST:PORT",
        ),
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    arguments: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each bad argument is one line on stderr and exit status 2; no database file is made."""
    db = tmp_path / "memory.db"
    assert main(["mcp", "--db", str(db), *arguments]) == 2
    assert capsys.readouterr().err == f"lionmem mcp: {message}\n"
    assert not db.exists()


def test_a_request_cap_that_is_not_a_number_exits_2(tmp_path: Path) -> None:
    """argparse refuses --max-request-bytes ten with its usage and status 2."""
    db = tmp_path / "memory.db"
    result = subprocess.run(
        [sys.executable, "-m", "lionmem", "mcp", "--db", str(db), "--max-request-bytes", "ten"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        "lionmem mcp: error: argument --max-request-bytes: invalid int value: 'ten'"
    )
    assert not db.exists()


def test_a_store_that_cannot_be_opened_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --db in a missing directory is refused the way every lionmem command refuses it."""
    assert main(["mcp", "--db", str(tmp_path / "no" / "memory.db")]) == 2
    assert capsys.readouterr().err == (
        f"lionmem mcp: --db {tmp_path / 'no' / 'memory.db'}: the directory {tmp_path / 'no'} "
        "does not exist\n"
    )


def test_a_store_from_the_environment_is_named_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A target from ``$LIONMEM_DB`` that cannot be opened is refused naming the variable."""
    monkeypatch.setenv("LIONMEM_DB", str(tmp_path))
    assert main(["mcp"]) == 2
    assert capsys.readouterr().err == (
        f"lionmem mcp: $LIONMEM_DB {tmp_path} is a directory; give the path of a database "
        f"file, e.g. {tmp_path / 'memory.db'}\n"
    )


def test_a_port_in_use_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An address that cannot be bound is one line and exit status 2, not a traceback."""
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        status = main(["mcp", "--db", str(tmp_path / "memory.db"), "--http", f"127.0.0.1:{port}"])
    assert status == 2
    assert capsys.readouterr().err == (
        f"lionmem mcp: cannot serve at 127.0.0.1:{port}: Address already in use\n"
    )


def test_a_host_name_that_does_not_resolve_exits_2_saying_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name the resolver does not know (``.invalid`` never resolves) is one line with the
    resolver's reason, not its error number."""
    monkeypatch.setenv("LIONMEM_MCP_TOKEN", "a-token-of-at-least-32-characters-long")
    status = main(["mcp", "--db", str(tmp_path / "memory.db"), "--http", "nonexistent.invalid:0"])
    error = capsys.readouterr().err
    assert (status, error.startswith("lionmem mcp: cannot serve at nonexistent.invalid:0: ")) == (
        2,
        True,
    )
    assert "Unknown error" not in error, error
    assert error.count("\n") == 1


def test_without_the_extra_the_command_names_it(tmp_path: Path) -> None:
    """Without the mcp SDK, lionmem mcp says which extra to install; import lionmem still works."""
    script = (
        "import sys\n"
        "sys.modules['mcp'] = None  # as if the SDK were not installed\n"
        "import lionmem\n"
        "from lionmem.cli import main\n"
        f"raise SystemExit(main(['mcp', '--db', {str(tmp_path / 'memory.db')!r}]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "lionmem mcp: the MCP server needs the 'mcp' extra: pip install 'lionmem[mcp]'\n"
    )


def test_without_the_extra_the_package_raises_import_error_naming_it() -> None:
    """from lionmem.mcp import create_server raises ImportError with the extra's name."""
    script = (
        "import sys\n"
        "sys.modules['mcp'] = None\n"
        "import lionmem.mcp\n"
        "assert lionmem.mcp.DEFAULT_MAX_LIMIT == 100  # the limits need no SDK\n"
        "try:\n"
        "    from lionmem.mcp import create_server\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout == "the MCP server needs the 'mcp' extra: pip install 'lionmem[mcp]'\n"


def test_import_lionmem_does_not_import_the_sdk() -> None:
    """Neither import lionmem nor the lionmem command's parser loads the MCP SDK."""
    script = (
        "import sys, lionmem\n"
        "from lionmem.cli import build_parser\n"
        "build_parser()\n"
        "print(sorted(name for name in ('mcp', 'mcp_types', 'uvicorn', 'starlette') if name in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout == "[]\n"


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("127.0.0.1:8000", HttpAddress("127.0.0.1", 8000)),
        ("localhost:0", HttpAddress("localhost", 0)),
        ("[::1]:65535", HttpAddress("::1", 65535)),
        ("0.0.0.0:80", HttpAddress("0.0.0.0", 80)),
    ],
)
def test_addresses_parse(text: str, address: HttpAddress) -> None:
    """HOST:PORT and [IPv6]:PORT give the host without brackets and the port."""
    assert parse_address(text) == address


@pytest.mark.parametrize("port", ["\u00b2", "\u0663", "-1", "65536", "80a"])
def test_a_port_of_other_than_ascii_digits_is_refused(port: str) -> None:
    with pytest.raises(ValueError, match=r"^the port must be a number from 0 to 65535, got "):
        parse_address(f"localhost:{port}")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.20", False),
        ("memory.lan", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    """Only 127.0.0.0/8, ::1 and localhost count as loopback; a wildcard address does not."""
    assert is_loopback(host) is loopback
    refused = not loopback
    try:
        check_exposure(HttpAddress(host, 0), None)
    except ValueError:
        assert refused
    else:
        assert not refused


def test_a_token_from_the_environment_with_a_newline_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$LIONMEM_MCP_TOKEN`` read from a file with its newline is refused, not served unusable."""
    monkeypatch.setenv("LIONMEM_MCP_TOKEN", "secret\n")
    db = tmp_path / "memory.db"
    assert main(["mcp", "--db", str(db), "--http", "127.0.0.1:0"]) == 2
    assert capsys.readouterr().err == (
        "lionmem mcp: the bearer token starts or ends with whitespace (a space, a tab, a "
        "newline), which a client cannot send in its Authorization header; give it without\n"
    )
    assert not db.exists()


@pytest.mark.parametrize("token", ["secret\t", "\u00e9t\u00e9", "a\x00b"])
def test_http_app_refuses_a_token_no_client_can_send(token: str) -> None:
    with pytest.raises(ValueError, match=r"^the bearer token "):
        http_app(create_server(InMemoryStore()), HttpAddress("127.0.0.1", 0), token=token)


@pytest.mark.parametrize("token", ["a b", "!#$%&'*+-./09:;<=>?@AZ[]^_`az{|}~"])
def test_printable_ascii_tokens_are_accepted(token: str) -> None:
    check_exposure(HttpAddress("10.0.0.1", 0), token)


def test_http_app_takes_the_address_as_host_port_text() -> None:
    server = create_server(InMemoryStore())
    with pytest.raises(ValueError, match=r"^refusing to serve on 0\.0\.0\.0, which is not"):
        http_app(server, "0.0.0.0:8000")
    with pytest.raises(ValueError, match=r"^write an IPv6 address in brackets"):
        http_app(server, "::1:8000")
    with pytest.raises(TypeError, match=r"^address must be an HttpAddress or a 'HOST:PORT' str"):
        http_app(server, 8000)  # type: ignore[arg-type]  # the wrong type, on purpose
    http_app(server, "[::1]:0", token="secret")
