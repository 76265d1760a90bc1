// Write the TypeScript package of lionmem (types, schema copies, package.json) from schema/.
//
// Run by tools/generate.py, never by hand:
//   node tools/typescript/generate-types.mjs --schemas DIR --out DIR --version X.Y.Z --license SPDX
//
// json-schema-to-typescript 16 (pinned in package-lock.json, with the prettier that formats its
// output) is given one schema at a time, after these changes made in memory only (schema/ stays
// tool-neutral, as ajv's strict mode requires):
// - a $ref to another schema file becomes `tsType: <its title>` plus an `import type` of that
//   file's .d.ts, because the generator has no cross-file imports;
// - `allOf` beside the schema's own properties becomes two parts, so MemoryItem is
//   `Element & {...}`;
// - `unevaluatedProperties: false` (ignored by the generator) becomes `additionalProperties: false`
//   on the part that declares the properties;
// - a schema that other schemas extend through `allOf` gets no index signature: in TypeScript
//   every extension would inherit it and no leaf could be closed (structural typing still lets an
//   object with more properties be used as an Element);
// - a schema that constrains nothing (`content`: a description and a default) becomes `unknown`
//   instead of the object the generator would make of it;
// - a $ref inside the file with a description beside it becomes a one-part `allOf`, so the
//   generator reuses the referenced type instead of declaring a numbered copy of it.
// Anything the rewriting does not understand stops the run with a message, never a guess.

import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { compile } from "json-schema-to-typescript";
import { loadSchemas } from "./schemas.mjs";

const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SCHEMA_LISTS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const SCHEMA_SINGLES = [
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "contains",
  "not",
  "if",
  "then",
  "else",
];
// Keywords that constrain a value's type; a schema with none of them accepts any JSON value.
const TYPING_KEYWORDS = new Set([
  "type",
  "$ref",
  "tsType",
  "enum",
  "const",
  "allOf",
  "anyOf",
  "oneOf",
  "not",
  "if",
  "properties",
  "patternProperties",
  "additionalProperties",
  "required",
  "items",
  "prefixItems",
]);
// Keywords that describe the object itself, moved into the second `allOf` part.
const OBJECT_KEYWORDS = [
  "type",
  "properties",
  "patternProperties",
  "required",
  "additionalProperties",
  "unevaluatedProperties",
  "propertyNames",
  "minProperties",
  "maxProperties",
  "dependentRequired",
];
const REF_ONLY = new Set(["$ref", "$comment"]);
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function fail(message) {
  throw new Error(`tools/typescript/generate-types.mjs: ${message}`);
}

const BANNER = [
  "Generated from SOURCE by tools/generate.py: do not edit by hand.",
  "Regenerate with `python tools/generate.py`; `python tools/generate.py --check` finds drift.",
];

function banner(source) {
  const [first, second] = BANNER.map((line) => line.replace("SOURCE", source));
  return `/* ${first}\n * ${second} */`;
}

function lineBanner(source) {
  return BANNER.map((line) => `// ${line.replace("SOURCE", source)}`).join("\n");
}

/** The TypeScript type name of each schema, keyed by its $id. */
function typeNames(documents) {
  const names = new Map();
  const seen = new Set();
  for (const document of documents) {
    const title = document.schema.title;
    if (typeof title !== "string" || !IDENTIFIER.test(title)) {
      fail(`${document.file}: the title ${JSON.stringify(title)} is not a TypeScript identifier`);
    }
    if (seen.has(title)) {
      fail(`${document.file}: another schema already has the title ${title}`);
    }
    seen.add(title);
    names.set(document.id, { title, file: document.file });
  }
  return names;
}

/** The $ids of the schemas that some schema extends through `allOf`. */
function extendedIds(documents) {
  const ids = new Set();
  for (const document of documents) {
    for (const part of document.schema.allOf ?? []) {
      if (typeof part.$ref === "string") {
        ids.add(new URL(part.$ref, document.id).href);
      }
    }
  }
  return ids;
}

function isSchemaObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Rewrite one schema node (a fresh copy) for json-schema-to-typescript, recording imports. */
function rewrite(node, context) {
  if (!isSchemaObject(node)) {
    return node; // boolean schemas
  }
  const out = { ...node };
  for (const key of SCHEMA_MAPS) {
    if (isSchemaObject(out[key])) {
      out[key] = Object.fromEntries(
        Object.entries(out[key]).map(([name, value]) => [name, rewrite(value, context)]),
      );
    }
  }
  for (const key of SCHEMA_LISTS) {
    if (Array.isArray(out[key])) {
      out[key] = out[key].map((value) => rewrite(value, context));
    }
  }
  for (const key of SCHEMA_SINGLES) {
    if (key in out) {
      out[key] = rewrite(out[key], context);
    }
  }
  if ("unevaluatedProperties" in out) {
    if (out.unevaluatedProperties === false) {
      out.additionalProperties = false;
    } else if (out.unevaluatedProperties !== true) {
      fail(`${context.file}: only a boolean unevaluatedProperties can be expressed in TypeScript`);
    }
    delete out.unevaluatedProperties;
  }
  if (typeof out.$ref === "string") {
    const target = new URL(out.$ref, context.id);
    const fragment = target.hash;
    target.hash = "";
    if (target.href === context.id) {
      out.$ref = fragment || "#"; // a reference inside this file: the generator resolves it
    } else {
      const named = context.names.get(target.href);
      if (named === undefined) {
        fail(`${context.file}: $ref ${out.$ref} names no schema in the folder`);
      }
      if (fragment !== "" && fragment !== "#") {
        fail(`${context.file}: $ref ${out.$ref} points inside another file, which is not supported`);
      }
      delete out.$ref;
      out.tsType = named.title;
      context.imports.set(named.title, named.file);
    }
  }
  if (typeof out.$ref === "string" && Object.keys(out).some((key) => !REF_ONLY.has(key))) {
    // A $ref with a description beside it: alone, the generator would declare a second copy of
    // the target type (Fidelity1) to carry that description; as an allOf part it reuses the
    // target and puts the description on the property.
    out.allOf = [{ $ref: out.$ref }, ...(out.allOf ?? [])];
    delete out.$ref;
  }
  if (Array.isArray(out.allOf) && OBJECT_KEYWORDS.some((key) => key in out)) {
    const own = {};
    for (const key of OBJECT_KEYWORDS) {
      if (key in out) {
        own[key] = out[key];
        delete out[key];
      }
    }
    out.allOf = [...out.allOf, own];
  }
  if (!Object.keys(out).some((key) => TYPING_KEYWORDS.has(key))) {
    out.tsType = "unknown";
  }
  return out;
}

async function typesFor(document, names, extended) {
  const { $schema, $id, ...schema } = document.schema;
  if ($schema !== "https://json-schema.org/draft/2020-12/schema") {
    fail(`${document.file}: expected draft 2020-12, got $schema ${JSON.stringify($schema)}`);
  }
  const context = { file: document.file, id: $id, names, imports: new Map() };
  const view = rewrite(schema, context);
  const closable = view.properties !== undefined && !("additionalProperties" in view);
  if (extended.has($id) && closable) {
    view.additionalProperties = false;
  }
  const body = await compile(view, names.get($id).title, {
    bannerComment: "",
    additionalProperties: true,
    unreachableDefinitions: false,
    declareExternallyReferenced: true,
    format: true,
    $refOptions: { resolve: { external: false } },
  });
  const imports = [...context.imports.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([title, file]) => `import type {${title}} from "./${file.replace(/\.json$/, ".js")}";\n`)
    .join("");
  return `${banner(`schema/${document.file}`)}\n\n${imports}${imports ? "\n" : ""}${body.trimStart()}`;
}

function indexTypes(documents) {
  const lines = [banner("schema/"), ""];
  for (const document of documents) {
    lines.push(`export * from "./${document.name}.js";`);
  }
  const union = documents.map((document) => JSON.stringify(document.name)).join(" | ");
  lines.push(
    "",
    "/** The name of a lionmem JSON schema: its file name in `schema/` without `.json`. */",
    `export type SchemaName = ${union};`,
    "",
    "/** The lionmem JSON schemas (draft 2020-12), parsed, keyed by name. */",
    "export declare const schemas: {readonly [name in SchemaName]: Readonly<Record<string, unknown>>};",
    "",
    "/** The version of the Python package lionmem these types and schemas belong to. */",
    "export declare const version: string;",
    "",
  );
  return lines.join("\n");
}

function indexModule(documents, version) {
  const entries = documents
    .map((document) => `  ${JSON.stringify(document.name)}: ${JSON.stringify(document.schema, null, 2).replaceAll("\n", "\n  ")}`)
    .join(",\n");
  return [
    lineBanner("schema/"),
    "",
    `export const version = ${JSON.stringify(version)};`,
    "",
    `export const schemas = {\n${entries}\n};`,
    "",
  ].join("\n");
}

function packageJson(version, license) {
  const manifest = {
    name: "lionmem",
    version,
    description: `TypeScript types and JSON schemas of lionmem ${version}, generated from schema/ by tools/generate.py: do not edit by hand.`,
    license,
    private: true,
    type: "module",
    types: "./index.d.ts",
    exports: {
      ".": { types: "./index.d.ts", default: "./index.js" },
      "./schema/*.json": "./schema/*.json",
      "./package.json": "./package.json",
    },
    files: ["*.d.ts", "index.js", "schema/"],
    sideEffects: false,
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

async function main() {
  const { values } = parseArgs({
    options: {
      schemas: { type: "string" },
      out: { type: "string" },
      version: { type: "string" },
      license: { type: "string" },
    },
    strict: true,
  });
  for (const option of ["schemas", "out", "version", "license"]) {
    if (values[option] === undefined) {
      fail(`--${option} is required`);
    }
  }
  const documents = loadSchemas(values.schemas);
  const names = typeNames(documents);
  const extended = extendedIds(documents);
  const out = values.out;
  fs.mkdirSync(path.join(out, "schema"), { recursive: true });
  for (const document of documents) {
    fs.writeFileSync(path.join(out, `${document.name}.d.ts`), await typesFor(document, names, extended));
    fs.copyFileSync(document.path, path.join(out, "schema", document.file));
  }
  fs.writeFileSync(path.join(out, "index.d.ts"), indexTypes(documents));
  fs.writeFileSync(path.join(out, "index.js"), indexModule(documents, values.version));
  fs.writeFileSync(path.join(out, "package.json"), packageJson(values.version, values.license));
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
