// The generated TypeScript package: tsc --strict accepts a consumer of it and rejects misuse, and
// its runtime module carries exactly the schemas and version it declares.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { GENERATED_TS, ROOT, SCHEMA_DIR, temporaryFolder } from "./support.mjs";

const TSC = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");

/** A copy of tests/js/consumer/ that depends on generated/typescript/ as node_modules/lionmem. */
function consumerProject(t) {
  const project = temporaryFolder(t, "typescript-consumer");
  fs.cpSync(path.join(ROOT, "tests", "js", "consumer"), project, { recursive: true });
  fs.mkdirSync(path.join(project, "node_modules"));
  fs.symlinkSync(GENERATED_TS, path.join(project, "node_modules", "lionmem"), "dir");
  return project;
}

function tsc(project, ...args) {
  const result = spawnSync(process.execPath, [TSC, "-p", ".", ...args], { cwd: project, encoding: "utf8" });
  assert.equal(result.error, undefined);
  return result;
}

test("tsc --strict --noEmit compiles the consumer, every expected error included", (t) => {
  const result = tsc(consumerProject(t));
  assert.deepEqual([result.status, result.stdout], [0, ""]);
});

test("the consumer's expect-error lines are each a real type error", (t) => {
  // Without the directives, tsc must report an error on each line that carried one.
  const project = consumerProject(t);
  const file = path.join(project, "consumer.ts");
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const expected = [];
  const kept = [];
  for (const line of lines) {
    if (line.trim().startsWith("// @ts-expect-error")) {
      expected.push(kept.length + 1);
    } else {
      kept.push(line);
    }
  }
  fs.writeFileSync(file, kept.join("\n"));
  const result = tsc(project, "--pretty", "false");
  const reported = [...new Set([...result.stdout.matchAll(/^consumer\.ts\((\d+),\d+\): error/gm)].map((m) => Number(m[1])))];
  assert.deepEqual([result.status, reported, expected.length >= 10], [2, expected, true]);
});

test("the package's schemas are the files in schema/, parsed", async () => {
  const module = await import(pathToFileURL(path.join(GENERATED_TS, "index.js")).href);
  const files = fs.readdirSync(SCHEMA_DIR).filter((file) => file.endsWith(".json")).sort();
  const expected = Object.fromEntries(
    files.map((file) => [file.slice(0, -5), JSON.parse(fs.readFileSync(path.join(SCHEMA_DIR, file), "utf8"))]),
  );
  assert.deepEqual(module.schemas, expected);
});

test("the package's runtime version is its package.json version", async () => {
  const module = await import(pathToFileURL(path.join(GENERATED_TS, "index.js")).href);
  const manifest = JSON.parse(fs.readFileSync(path.join(GENERATED_TS, "package.json"), "utf8"));
  assert.equal(module.version, manifest.version);
});

/** The first fenced block of `language` after `heading` on the non-Python clients page. */
function clientsExample(heading, language) {
  const page = fs.readFileSync(path.join(ROOT, "docs", "clients.md"), "utf8");
  const start = page.indexOf(`\n## ${heading}\n`);
  assert.notEqual(start, -1, heading);
  const match = page.slice(start).match(new RegExp("```" + language + "\\n([^]*?)```"));
  assert.ok(match, `${heading}: no ${language} block`);
  return match[1];
}

test("the clients page's TypeScript example compiles with tsc --strict", (t) => {
  const project = consumerProject(t);
  fs.writeFileSync(path.join(project, "consumer.ts"), clientsExample("TypeScript", "ts"));
  const result = tsc(project);
  assert.deepEqual([result.status, result.stdout], [0, ""]);
});

test("the clients page's ajv example runs and gives the verdicts its comments state", (t) => {
  const example = clientsExample("Validating in JavaScript", "js");
  const checks = [];
  const program = example.replace(/^(validate\w*\(.*\));\s*\/\/ (true|false)\b.*$/gm, (_, call, verdict) => {
    checks.push(verdict === "true");
    return `console.log(${call});`;
  });
  const project = temporaryFolder(t, "clients-example");
  fs.mkdirSync(path.join(project, "node_modules"));
  fs.symlinkSync(GENERATED_TS, path.join(project, "node_modules", "lionmem"), "dir");
  for (const name of ["ajv", "ajv-formats"]) {
    fs.symlinkSync(path.join(ROOT, "node_modules", name), path.join(project, "node_modules", name), "dir");
  }
  fs.writeFileSync(path.join(project, "example.mjs"), program);
  const result = spawnSync(process.execPath, ["example.mjs"], { cwd: project, encoding: "utf8" });
  const printed = result.stdout.trim().split("\n").map((line) => line === "true");
  assert.deepEqual([result.status, result.stderr, printed, checks.length >= 2], [0, "", checks, true]);
});
