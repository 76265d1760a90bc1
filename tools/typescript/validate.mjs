// Validate JSON documents with ajv, for tests driven from Python.
//
//   node tools/typescript/validate.mjs --schemas DIR < cases.json > verdicts.json
//
// stdin: a JSON array of {"schema": "<schema name>", "document": <any JSON>}.
// stdout: a JSON array, in the same order, of {"valid": true|false, "errors": [ajv errors]}.

import fs from "node:fs";
import { parseArgs } from "node:util";
import { validatorFor } from "./ajv.mjs";

const { values } = parseArgs({ options: { schemas: { type: "string" } }, strict: true });
if (values.schemas === undefined) {
  console.error("tools/typescript/validate.mjs: --schemas DIR is required");
  process.exit(2);
}
const validate = validatorFor(values.schemas);
const cases = JSON.parse(fs.readFileSync(0, "utf8"));
const verdicts = cases.map((entry) => validate(entry.schema, entry.document));
process.stdout.write(`${JSON.stringify(verdicts)}\n`);
