// Generated from schema/ by tools/generate.py: do not edit by hand.
// Regenerate with `python tools/generate.py`; `python tools/generate.py --check` finds drift.

export const version = "0.1.0";

export const schemas = {
  "element": {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://lionmem.dev/schema/element.json",
    "title": "Element",
    "description": "An identified, timestamped record: the base of every lionmem model. Open to extension through allOf; each leaf schema closes itself.",
    "type": "object",
    "properties": {
      "id": {
        "description": "Identity of the element: a UUID in its canonical string form. Generated (version 4) when absent; it never changes once set.",
        "type": "string",
        "format": "uuid",
        "readOnly": true
      },
      "created_at": {
        "description": "Creation time as UTC POSIX seconds (a finite number). Set to the current time when absent; it never changes once set.",
        "type": "number",
        "readOnly": true
      },
      "metadata": {
        "description": "Free-form metadata: a JSON object with string keys. If it carries the key lion_class, its value must name the concrete class of the record.",
        "type": "object",
        "default": {}
      }
    }
  },
  "memory_item": {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://lionmem.dev/schema/memory_item.json",
    "title": "MemoryItem",
    "description": "One unit of memory: an Element with content and tags. Unknown properties are rejected.",
    "allOf": [
      {
        "$ref": "element.json"
      }
    ],
    "type": "object",
    "properties": {
      "content": {
        "description": "The remembered value: any JSON value, null by default. Text search matches against its Python str() form.",
        "default": null
      },
      "tags": {
        "description": "Labels for tag search, in order; duplicates and empty strings are kept. Matching is exact and case-sensitive.",
        "type": "array",
        "items": {
          "type": "string"
        },
        "default": []
      }
    },
    "unevaluatedProperties": false
  },
  "memory_query": {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://lionmem.dev/schema/memory_query.json",
    "title": "MemoryQuery",
    "description": "A search request: optional text, tags and metadata filters, combined with AND, then a limit. Unknown properties are rejected.",
    "type": "object",
    "properties": {
      "text": {
        "description": "Case-insensitive substring to find in each item's content; null or an empty string applies no text predicate.",
        "type": [
          "string",
          "null"
        ],
        "default": null
      },
      "tags": {
        "description": "Any-of tag match: an item matches when it carries at least one of these tags; null or an empty list applies no tag predicate.",
        "type": [
          "array",
          "null"
        ],
        "items": {
          "type": "string"
        },
        "default": null
      },
      "filters": {
        "description": "All-of metadata equality: every key must equal the item's metadata value, a missing key counting as null; null or an empty object applies no filter.",
        "type": [
          "object",
          "null"
        ],
        "default": null
      },
      "limit": {
        "description": "Maximum number of results, applied last as a Python slice stop: 0 returns nothing and a negative value drops that many matches from the end (external adapters reject negative values).",
        "type": "integer",
        "default": 20
      }
    },
    "additionalProperties": false
  }
};
