// A TypeScript client of lionmem's generated types. tsc --strict must accept it: every line marked
// with the expect-error directive must be an error, since tsc reports an unused directive.

import type {Element, MemoryItem, MemoryQuery, SchemaName} from "lionmem";
import {schemas, version} from "lionmem";

// Every property, with the JSON types the schemas allow.
export const item: MemoryItem = {
  id: "5f0c8f8e-3a2b-4c1d-9e8f-0a1b2c3d4e5f",
  created_at: 1_700_000_000.25,
  metadata: {source: "wiki", nested: {depth: [1, 2, {three: null}]}},
  content: {text: "Paris 🦁", list: [1, "two", null, true]},
  tags: ["geo", "", "geo"],
};
// Every property is optional: the models fill in the defaults.
export const empty: MemoryItem = {};
export const query: MemoryQuery = {text: "paris", tags: ["geo"], filters: {source: "wiki"}, limit: 5};
export const nullQuery: MemoryQuery = {text: null, tags: null, filters: null};
// content is any JSON value.
export const contents: MemoryItem[] = [{content: null}, {content: 3}, {content: "x"}, {content: [[]]}];
// A MemoryItem is an Element.
export const base: Element = item;
export const name: SchemaName = "memory_item";
export const schema: Readonly<Record<string, unknown>> = schemas[name];
export const packageVersion: string = version;

// content is unknown, not any: using it needs a check first.
export function contentLength(memory: MemoryItem): number {
  // @ts-expect-error content is unknown: no property access without narrowing
  memory.content.length;
  return typeof memory.content === "string" ? memory.content.length : 0;
}

// Misspelled properties are rejected: MemoryItem, MemoryQuery and the Element part are closed.
// @ts-expect-error "tag" is not a MemoryItem property ("tags" is)
export const misspelledTags: MemoryItem = {tag: ["geo"]};
// @ts-expect-error "createdAt" is not a MemoryItem property ("created_at" is)
export const misspelledCreatedAt: MemoryItem = {createdAt: 1};
// @ts-expect-error "Content" is not a MemoryItem property (names are case-sensitive)
export const capitalisedContent: MemoryItem = {Content: "x"};
// @ts-expect-error "limits" is not a MemoryQuery property ("limit" is)
export const misspelledLimit: MemoryQuery = {limits: 5};
// @ts-expect-error "metdata" is not an Element property ("metadata" is)
export const misspelledMetadata: Element = {metdata: {}};

// Wrong types are rejected.
// @ts-expect-error tags are strings
export const numericTags: MemoryItem = {tags: [1, 2]};
// @ts-expect-error tags are a list, not one string
export const stringTags: MemoryItem = {tags: "geo"};
// @ts-expect-error created_at is a number: ISO strings are a Python-side convenience only
export const isoCreatedAt: MemoryItem = {created_at: "2024-01-01T00:00:00Z"};
// @ts-expect-error id is a string
export const numericId: MemoryItem = {id: 42};
// @ts-expect-error metadata is an object
export const listMetadata: MemoryItem = {metadata: ["a"]};
// @ts-expect-error metadata is an object, not null
export const nullMetadata: MemoryItem = {metadata: null};
// @ts-expect-error limit is a number
export const stringLimit: MemoryQuery = {limit: "5"};
// @ts-expect-error limit cannot be null
export const nullLimit: MemoryQuery = {limit: null};
// @ts-expect-error text is a string or null
export const numericText: MemoryQuery = {text: 5};
// @ts-expect-error there is no schema called "memory"
export const unknownSchema: SchemaName = "memory";
