// Shared helpers of the Node tests: repository paths, the Python interpreter, temporary folders.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const SCHEMA_DIR = path.join(ROOT, "schema");
export const VECTOR_DIR = path.join(ROOT, "tests", "vectors");
export const GENERATED_TS = path.join(ROOT, "generated", "typescript");

/**
 * The Python that has lionmem installed: $LIONMEM_PYTHON (make sets it), else the project's
 * .venv. A missing interpreter fails the test that needs it; it never skips it.
 */
export function python() {
  const candidate = path.resolve(ROOT, process.env.LIONMEM_PYTHON ?? ".venv/bin/python");
  if (!fs.existsSync(candidate)) {
    throw new Error(
      `no Python at ${candidate}: run \`make install\`, or set LIONMEM_PYTHON to a Python with lionmem installed`,
    );
  }
  return candidate;
}

/** Run `python tests/js/python_side.py ...args` from the repository root; throw on failure. */
export function runPythonSide(...args) {
  const result = spawnSync(python(), [path.join(ROOT, "tests", "js", "python_side.py"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
  });
  if (result.error !== undefined || result.status !== 0) {
    throw new Error(`python_side.py ${args.join(" ")} failed (${result.status}): ${result.error ?? ""}\n${result.stderr}`);
  }
  return result.stdout;
}

/** A fresh temporary folder, removed when the test that asked for it ends. */
export function temporaryFolder(t, prefix) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), `lionmem-${prefix}-`));
  t.after(() => fs.rmSync(folder, { recursive: true, force: true }));
  return folder;
}

/** Every line of a JSON-lines file, parsed. */
export function readJsonLines(file) {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
}

/** Every shared vector: {file, vector}, sorted by path. */
export function loadVectors() {
  const vectors = [];
  for (const folder of fs.readdirSync(VECTOR_DIR).sort()) {
    for (const file of fs.readdirSync(path.join(VECTOR_DIR, folder)).sort()) {
      if (file.endsWith(".json")) {
        const vector = JSON.parse(fs.readFileSync(path.join(VECTOR_DIR, folder, file), "utf8"));
        vectors.push({ file: `${folder}/${file}`, vector });
      }
    }
  }
  return vectors;
}
