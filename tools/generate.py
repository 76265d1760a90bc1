"""Rewrite generated/ from schema/, or check that it is up to date (--check).

This is the one entry point that writes generated/. Everything is first generated into a
temporary directory with the pinned generator and formatter; then either the output replaces
the committed folders (stale files removed first), or, with --check, the two trees are compared
and any difference (schema edit, hand edit, stale or missing file) is printed as a unified diff
and the exit status is 1.

Usage, always from anywhere (the script changes to the repository root itself):
    python tools/generate.py          # regenerate
    python tools/generate.py --check  # exit 1 with a diff when generated/ is stale
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
PYPROJECT = ROOT / "pyproject.toml"
HEADER = (
    "# Generated from schema/ by tools/generate.py: do not edit by hand.\n"
    "# Regenerate with `python tools/generate.py`; `python tools/generate.py --check` finds drift."
)
IGNORED_PARTS = {"__pycache__"}
"""Folders under generated/ that are no output: Python's bytecode caches."""


def pinned_versions() -> dict[str, str]:
    """Return the exact versions the ``codegen`` dependency group pins (name -> version).

    Exits naming any requirement of the group that is not pinned exactly (``name==version``):
    the output depends on each of them.
    """
    groups = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["dependency-groups"]
    pins: dict[str, str] = {}
    loose = []
    for requirement in groups["codegen"]:
        name, equals, version = str(requirement).partition("==")
        if not equals or not name.strip() or not re.fullmatch(r"[\w.+!-]+", version.strip()):
            loose.append(str(requirement))
            continue
        pins[name.strip()] = version.strip()
    if loose:
        sys.exit(
            "tools/generate.py: the codegen dependency group must pin each tool exactly "
            f"(name==version), since the output depends on it: {', '.join(map(repr, loose))}"
        )
    return pins


def check_pins() -> None:
    """Refuse to run with a generator or formatter other than the pinned ones: output depends on them."""
    wrong = []
    for name, wanted in pinned_versions().items():
        try:
            found = metadata.version(name)
        except metadata.PackageNotFoundError:
            wrong.append(f"{name}=={wanted} is pinned but not installed")
            continue
        if found != wanted:
            wrong.append(f"{name}=={wanted} is pinned but {name} {found} is installed")
    if wrong:
        sys.exit(
            "tools/generate.py: " + "; ".join(wrong) + ". Run `make install` (or "
            "`pip install --group codegen`) in the project's virtual environment."
        )


def run(*command: str) -> None:
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(
            f"tools/generate.py: `{' '.join(command)}` failed with exit status "
            f"{result.returncode}\n{result.stdout}{result.stderr}"
        )


def tool(name: str) -> str:
    """Return the console script ``name`` installed beside this Python (the pinned one)."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name


# The npm packages whose versions decide the bytes of generated/typescript/ (the generator and
# the formatter it runs); package-lock.json pins them and `npm ci` installs exactly those.
NODE_PINNED = ("json-schema-to-typescript", "prettier")
PACKAGE_LOCK = ROOT / "package-lock.json"


def check_node_tooling() -> None:
    """Refuse to run without node or with node_modules/ missing or other than package-lock.json pins."""
    if shutil.which("node") is None:
        sys.exit(
            "tools/generate.py: `node` was not found on PATH; generated/typescript/ needs "
            "Node.js 20 or later (and `npm ci`, which `make install` runs)."
        )
    locked = json.loads(PACKAGE_LOCK.read_text(encoding="utf-8"))["packages"]
    wrong = []
    for name in NODE_PINNED:
        wanted = locked.get(f"node_modules/{name}", {}).get("version", "not locked")
        installed = ROOT / "node_modules" / name / "package.json"
        if not installed.exists():
            wrong.append(f"{name}@{wanted} is locked but not in node_modules/")
            continue
        found = json.loads(installed.read_text(encoding="utf-8"))["version"]
        if found != wanted:
            wrong.append(f"{name}@{wanted} is locked but node_modules/ has {name}@{found}")
    if wrong:
        sys.exit(
            "tools/generate.py: " + "; ".join(wrong) + ". Run `make install` (or `npm ci`) "
            "in the repository root."
        )


def generate_python(out: Path) -> None:
    """Write the Pydantic models to ``out`` (the package ``lionmem_models``)."""
    # Options live in [tool.datamodel-codegen] of pyproject.toml; the run must start at the root.
    run(
        tool("datamodel-codegen"),
        "--output",
        str(out),
        "--no-formatters",
        "--custom-file-header",
        HEADER,
    )
    # Format with the project's own ruff settings so generated/ passes the same checks as the
    # rest of the tree, wherever it was written.
    config = str(PYPROJECT)
    # E501 as for generated/ in pyproject.toml: `out` may lie outside the tree its glob matches.
    run(tool("ruff"), "check", "--config", config, "--ignore", "E501", "--fix", "--quiet", str(out))
    run(tool("ruff"), "format", "--config", config, "--quiet", str(out))


def generate_typescript(out: Path) -> None:
    """Write the TypeScript package (types, schema copies, package.json) to ``out``."""
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    run(
        "node",
        str(ROOT / "tools" / "typescript" / "generate-types.mjs"),
        "--schemas",
        str(ROOT / "schema"),
        "--out",
        str(out),
        "--version",
        project["version"],
        "--license",
        project["license"],
    )


MCP_TOOLS = ROOT / "tools" / "codegen" / "mcp_tools.json"
MCP_HEADER = (
    "Generated from schema/ and tools/codegen/mcp_tools.json by tools/generate.py: do not edit "
    "by hand. Regenerate with `python tools/generate.py`."
)
# Annotations of a whole document that mean nothing once it is bundled inside another.
DOCUMENT_KEYWORDS = ("$schema", "$id")
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def _schema_documents() -> dict[str, dict[str, Any]]:
    """Return the documents of schema/ keyed by their $id."""
    documents = {}
    for path in sorted((ROOT / "schema").glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        documents[document["$id"]] = document
    return documents


def _bundle(schema: dict[str, Any], documents: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Return ``schema`` as one self-contained document: every schema/ document it reaches sits
    under ``$defs`` at the root, named by its title, and every ``$ref`` points into the result.

    MCP clients resolve no reference outside the tool's own schema, so nothing may point out.
    A schema that is only a reference to a schema/ document becomes that document itself.
    """
    defs: dict[str, Any] = {}
    # Where each document's content sits in the result, as a JSON pointer.
    location: dict[str, str] = {}

    def pointer_to(ref: str, base: str) -> str:
        target, _, fragment = urljoin(base, ref).partition("#")
        if target == base:
            return location[base] + fragment
        if target not in documents:
            sys.exit(f"tools/generate.py: {ref!r} does not name a document of schema/")
        if target not in location:
            embed(target)
        return location[target] + fragment

    def rewrite(node: Any, base: str, top: bool = False) -> Any:
        if isinstance(node, dict):
            return {
                key: pointer_to(value, base) if key == "$ref" else rewrite(value, base)
                for key, value in node.items()
                if not (top and key in DOCUMENT_KEYWORDS)
            }
        if isinstance(node, list):
            return [rewrite(value, base) for value in node]
        return node

    def embed(document_id: str) -> None:
        name = str(documents[document_id]["title"])
        location[document_id] = f"#/$defs/{name}"
        defs[name] = rewrite(documents[document_id], document_id, top=True)

    if set(schema) == {"$ref"} and schema["$ref"] in documents:
        base = schema["$ref"]
        location[base] = "#"
        root = rewrite(documents[base], base, top=True)
    else:
        location[""] = "#"
        root = rewrite(schema, "")
    if "$defs" in root and defs:
        sys.exit("tools/generate.py: a bundled tool schema may not have $defs of its own")
    return {"$schema": DRAFT_2020_12, **root, **({"$defs": defs} if defs else {})}


def generate_mcp(out: Path) -> None:
    """Write one self-contained MCP tool document per tool to ``out``."""
    documents = _schema_documents()
    spec = json.loads(MCP_TOOLS.read_text(encoding="utf-8"))
    out.mkdir(parents=True)
    for entry in spec["tools"]:
        tool = {key: value for key, value in entry.items() if key != "requires"}
        tool["inputSchema"] = _bundle(entry["inputSchema"], documents)
        tool["outputSchema"] = _bundle(entry["outputSchema"], documents)
        document = {"$comment": MCP_HEADER, "requires": entry.get("requires"), "tool": tool}
        _write_json(out / f"{entry['name']}.json", document)
    # The order in which the server lists the tools.
    names = [entry["name"] for entry in spec["tools"]]
    _write_json(out / "index.json", {"$comment": MCP_HEADER, "tools": names})


def _write_json(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


TARGETS: dict[str, Callable[[Path], None]] = {
    "lionmem_models": generate_python,
    "typescript": generate_typescript,
    "mcp": generate_mcp,
}


def files_under(folder: Path) -> dict[str, Path]:
    if not folder.exists():
        return {}
    return {
        path.relative_to(folder).as_posix(): path
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not IGNORED_PARTS.intersection(path.relative_to(folder).parts)
    }


def _bytes(path: Path | None) -> bytes | None:
    return None if path is None else path.read_bytes()


def _lines(data: bytes | None) -> list[str]:
    """Return the lines of a file's ``data`` with their endings as written (``\r\n`` stays),
    bytes that are not UTF-8 as escapes; none for a file that is absent."""
    if data is None:
        return []
    return data.decode("utf-8", "backslashreplace").splitlines(keepends=True)


def differences(expected_root: Path, actual_root: Path) -> list[str]:
    """Return a unified diff (as lines) turning the committed tree into the fresh one."""
    expected = files_under(expected_root)
    actual = files_under(actual_root)
    lines: list[str] = []
    for name in sorted(expected.keys() | actual.keys()):
        committed, fresh = _bytes(actual.get(name)), _bytes(expected.get(name))
        if name not in expected:
            lines.append(f"stale file, not produced from schema/: generated/{name}\n")
        elif name not in actual:
            lines.append(f"missing file: generated/{name}\n")
        if committed == fresh:
            continue
        diff = list(
            difflib.unified_diff(
                _lines(committed),
                _lines(fresh),
                f"generated/{name} (committed)",
                f"generated/{name} (from schema/)",
            )
        )
        # Bytes that are not UTF-8 show as escapes, which may read like the generator's text.
        lines += diff or [f"generated/{name}: bytes differ from the generator's output\n"]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 with a diff when generated/ is stale"
    )
    args = parser.parse_args(argv)
    check_pins()
    check_node_tooling()
    with tempfile.TemporaryDirectory(prefix="lionmem-generate-") as tmp:
        fresh = Path(tmp)
        for name, target in TARGETS.items():
            target(fresh / name)
        diff = differences(fresh, GENERATED)
        if args.check:
            if diff:
                sys.stdout.writelines(diff)
                print(
                    "\ngenerated/ is stale: run `python tools/generate.py` and commit the result."
                )
                return 1
            print("generated/ is up to date with schema/.")
            return 0
        shutil.rmtree(GENERATED, ignore_errors=True)
        GENERATED.mkdir()
        for name in TARGETS:
            shutil.copytree(
                fresh / name, GENERATED / name, ignore=shutil.ignore_patterns(*IGNORED_PARTS)
            )
        print(f"generated/ rewritten from schema/ ({len(files_under(GENERATED))} files).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
