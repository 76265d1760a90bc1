// Documents written by the Python models (model_dump_json) all validate in ajv.

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { validatorFor } from "../../tools/typescript/ajv.mjs";
import { SCHEMA_DIR, readJsonLines, runPythonSide } from "./support.mjs";

const COUNT = 500;
const SEED = process.env.LIONMEM_SEED ?? "20261129";
const NAMES = ["element", "memory_item", "memory_query"];

describe(`documents written by the Python models (seed ${SEED})`, () => {
  let folder;
  const documents = {};
  before(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), "lionmem-python-documents-"));
    runPythonSide("write", folder, "--count", String(COUNT), "--seed", SEED);
    for (const name of NAMES) {
      documents[name] = readJsonLines(path.join(folder, `${name}.jsonl`));
    }
  });
  after(() => fs.rmSync(folder, { recursive: true, force: true }));

  for (const name of NAMES) {
    test(`${COUNT} ${name} documents all validate`, () => {
      const validate = validatorFor(SCHEMA_DIR);
      const invalid = documents[name]
        .map((document) => ({ document, ...validate(name, document) }))
        .filter((verdict) => !verdict.valid);
      assert.deepEqual([documents[name].length, invalid], [COUNT, []]);
    });
  }

  test("they include text beyond the BMP, content nested four deep and edge numbers", () => {
    const texts = JSON.stringify(documents.memory_item);
    const depth = (value) =>
      typeof value === "object" && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depth)) : 0;
    const deepest = Math.max(...documents.memory_item.map((item) => depth(item.content)));
    const createdAt = new Set(documents.memory_item.map((item) => item.created_at));
    const limits = new Set(documents.memory_query.map((query) => query.limit));
    assert.deepEqual(
      [/\p{Extended_Pictographic}/u.test(texts), deepest >= 4, createdAt.has(5e-324), limits.has(-1)],
      [true, true, true, true],
    );
  });
});
