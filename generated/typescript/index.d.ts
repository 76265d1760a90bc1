/* Generated from schema/ by tools/generate.py: do not edit by hand.
 * Regenerate with `python tools/generate.py`; `python tools/generate.py --check` finds drift. */

export * from "./element.js";
export * from "./memory_adapter_manifest.js";
export * from "./memory_item.js";
export * from "./memory_query.js";

/** The name of a lionmem JSON schema: its file name in `schema/` without `.json`. */
export type SchemaName = "element" | "memory_adapter_manifest" | "memory_item" | "memory_query";

/** The lionmem JSON schemas (draft 2020-12), parsed, keyed by name. */
export declare const schemas: {readonly [name in SchemaName]: Readonly<Record<string, unknown>>};

/** The version of the Python package lionmem these types and schemas belong to. */
export declare const version: string;
