// ajv (draft 2020-12 build, ajv-formats, strict mode) gives every shared vector its recorded verdict.

import assert from "node:assert/strict";
import { test } from "node:test";
import { createAjv, validatorFor } from "../../tools/typescript/ajv.mjs";
import { loadSchemas } from "../../tools/typescript/schemas.mjs";
import { SCHEMA_DIR, loadVectors } from "./support.mjs";

const validate = validatorFor(SCHEMA_DIR);
const vectors = loadVectors();

test("every schema compiles in ajv's strict mode", () => {
  const documents = loadSchemas(SCHEMA_DIR);
  const ajv = createAjv(documents.map((document) => document.schema));
  const compiled = documents.filter((document) => typeof ajv.getSchema(document.id) === "function");
  assert.deepEqual(
    compiled.map((document) => document.name),
    documents.map((document) => document.name),
  );
});

test("the shared vectors are found, each for a schema in schema/", () => {
  const names = new Set(loadSchemas(SCHEMA_DIR).map((document) => document.name));
  const strays = vectors.filter(({ vector }) => !names.has(vector.schema)).map(({ file }) => file);
  assert.deepEqual([vectors.length >= 30, strays], [true, []]);
});

test("ajv rejects the urn form of a UUID, as the uuid format of JSON Schema does", () => {
  const id = "urn:uuid:5f0c8f8e-3a2b-4c1d-9e8f-0a1b2c3d4e5f";
  assert.equal(validate("element", { id }).valid, false);
});

for (const { file, vector } of vectors) {
  test(`ajv: ${file}`, () => {
    const { valid, errors } = validate(vector.schema, vector.document);
    assert.equal(valid, vector.valid, `${vector.description}\najv errors: ${JSON.stringify(errors)}`);
  });
}
