// lionmem's schemas in ajv: the draft 2020-12 build, ajv-formats, strict mode.

import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { loadSchemas } from "./schemas.mjs";

// ajv-formats 3.0.1 also accepts "urn:uuid:<uuid>"; the "uuid" format of JSON Schema (RFC 4122's
// string form, 8-4-4-4-12 ASCII hex digits, as lionmem's MCP server checks it) does not. Without
// this override ajv and Python disagree on such an id.
export const UUID_FORMAT = /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i;

/** A configured ajv instance holding every schema in `schemas` (parsed schema objects). */
export function createAjv(schemas) {
  // Union types ("type": ["string", "null"]) are plain draft 2020-12, which strict mode only
  // rejects to catch mistakes in hand-written schemas; every other strict check stays on.
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addFormat("uuid", UUID_FORMAT);
  // addSchema every document, so that relative $refs ("element.json") resolve through $id.
  for (const schema of schemas) {
    ajv.addSchema(schema);
  }
  return ajv;
}

/**
 * A function validate(name, document) -> {valid, errors} for the schemas in `folder`, where
 * `name` is a schema's file name without `.json` ("memory_item").
 */
export function validatorFor(folder) {
  const documents = loadSchemas(folder);
  const ajv = createAjv(documents.map((document) => document.schema));
  const byName = new Map(documents.map((document) => [document.name, ajv.getSchema(document.id)]));
  return (name, document) => {
    const validate = byName.get(name);
    if (validate === undefined) {
      throw new Error(`no schema named ${JSON.stringify(name)} in ${folder}`);
    }
    const valid = validate(document);
    return { valid, errors: valid ? [] : validate.errors };
  };
}
