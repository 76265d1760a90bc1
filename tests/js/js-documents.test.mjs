// Documents written in JavaScript load into the Python models and dump back equal.

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { validatorFor } from "../../tools/typescript/ajv.mjs";
import { randomDocuments } from "./random-documents.mjs";
import { SCHEMA_DIR, readJsonLines, runPythonSide } from "./support.mjs";

const COUNT = 500;
const SEED = Number(process.env.LIONMEM_SEED ?? "20261129");
const NAMES = ["element", "memory_item", "memory_query"];

describe(`documents written in JavaScript (seed ${SEED})`, () => {
  let folder;
  const written = {};
  const returned = {};
  before(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), "lionmem-js-documents-"));
    const make = randomDocuments(SEED);
    for (const name of NAMES) {
      const lines = Array.from({ length: COUNT }, () => JSON.stringify(make[name]()));
      fs.writeFileSync(path.join(folder, `${name}.jsonl`), `${lines.join("\n")}\n`);
      // Compare what was written as JSON text, not the objects it came from (-0 is written "0").
      written[name] = lines.map((line) => JSON.parse(line));
    }
    runPythonSide("roundtrip", folder, path.join(folder, "back"));
    for (const name of NAMES) {
      returned[name] = readJsonLines(path.join(folder, "back", `${name}.jsonl`));
    }
  });
  after(() => fs.rmSync(folder, { recursive: true, force: true }));

  for (const name of NAMES) {
    test(`${COUNT} ${name} documents are schema-valid in ajv`, () => {
      const validate = validatorFor(SCHEMA_DIR);
      const invalid = written[name].filter((document) => !validate(name, document).valid);
      assert.deepEqual([written[name].length, invalid], [COUNT, []]);
    });

    test(`${COUNT} ${name} documents load into the Python model and dump back equal`, () => {
      // exclude_unset: a property the document left out comes back out, not as its default.
      const different = written[name]
        .map((document, index) => ({ document, back: returned[name][index] }))
        .filter(({ document, back }) => !isDeepStrictEqual(back, { dumped: document }));
      assert.deepEqual([returned[name].length, different], [COUNT, []]);
    });
  }
});

function isDeepStrictEqual(a, b) {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}
