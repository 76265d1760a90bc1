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
        "minimum": -1.7976931348623157e+308,
        "maximum": 1.7976931348623157e+308,
        "readOnly": true
      },
      "metadata": {
        "description": "Free-form metadata: a JSON object with string keys. If it carries the key lion_class, its value must name the concrete class of the record.",
        "type": "object",
        "default": {}
      }
    }
  },
  "memory_adapter_manifest": {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://lionmem.dev/schema/memory_adapter_manifest.json",
    "title": "MemoryAdapterManifest",
    "description": "What an external memory adapter declares about its storage and search behaviour (ADR-0093 D1). It is immutable for the lifetime of an adapter instance and checked by lionmem's conformance suite. Unknown properties are rejected.",
    "type": "object",
    "$defs": {
      "MemoryItemField": {
        "title": "MemoryItemField",
        "description": "The name of one MemoryItem field.",
        "type": "string",
        "enum": [
          "id",
          "created_at",
          "metadata",
          "content",
          "tags"
        ]
      },
      "Fidelity": {
        "title": "Fidelity",
        "description": "full: every MemoryItem field round-trips without adapter-defined loss. native_fields: every native field round-trips; dropped fields come back absent or defaulted as documented. lossy: at least one native field is normalised, truncated or synthesised, as the adapter documents with named fixtures.",
        "type": "string",
        "enum": [
          "full",
          "native_fields",
          "lossy"
        ]
      }
    },
    "properties": {
      "adapter": {
        "description": "Stable identifier of the adapter implementation, used in diagnostics and conformance reports; not a per-request display label.",
        "type": "string",
        "minLength": 1
      },
      "native_item_fields": {
        "description": "MemoryItem fields the service stores natively and direct retrieval returns. id, content and tags are always native.",
        "type": "array",
        "items": {
          "$ref": "#/$defs/MemoryItemField"
        },
        "uniqueItems": true
      },
      "dropped_item_fields": {
        "description": "MemoryItem fields the adapter does not persist; with native_item_fields they classify every field exactly once. The adapter documents the value each comes back with.",
        "type": "array",
        "items": {
          "$ref": "#/$defs/MemoryItemField"
        },
        "uniqueItems": true
      },
      "supported_filters": {
        "description": "The exact keys accepted in MemoryQuery.filters; any other key is rejected with UnsupportedMemoryQuery before the backend is called.",
        "type": "array",
        "items": {
          "type": "string"
        },
        "uniqueItems": true
      },
      "supports_any_filter_key": {
        "description": "True when every metadata key is accepted as a filter key (as by the reference store); supported_filters is then empty. False (the default) when only supported_filters is accepted.",
        "type": "boolean",
        "default": false
      },
      "search_consistency": {
        "description": "immediate: a successful store is visible to search at once. eventual: it may be missing from search until the index converges; direct retrieval is never stale.",
        "type": "string",
        "enum": [
          "immediate",
          "eventual"
        ]
      },
      "retrieve_fidelity": {
        "$ref": "#/$defs/Fidelity",
        "description": "Fidelity of direct identity retrieval."
      },
      "search_fidelity": {
        "$ref": "#/$defs/Fidelity",
        "description": "Fidelity of search hits, which may be lower than that of direct retrieval."
      },
      "search_returns_tags": {
        "description": "Whether search hits carry the stored tags (independent of whether writes accept tags).",
        "type": "boolean"
      },
      "preserves_metadata": {
        "description": "Whether the metadata mapping round-trips exactly through store and retrieve; true requires metadata to be a native field.",
        "type": "boolean"
      },
      "search_semantics": {
        "description": "reference: for every query the adapter accepts with a non-negative limit, search returns the same items in the same order as lionmem's InMemoryStore holding the same writes, once the index has converged (checked by the conformance suite's reference-search profile). backend-defined (the default): matching, ranking and order are the backend's own, as the adapter documents.",
        "type": "string",
        "enum": [
          "reference",
          "backend-defined"
        ],
        "default": "backend-defined"
      }
    },
    "required": [
      "adapter",
      "native_item_fields",
      "dropped_item_fields",
      "supported_filters",
      "search_consistency",
      "retrieve_fidelity",
      "search_fidelity",
      "search_returns_tags",
      "preserves_metadata"
    ],
    "additionalProperties": false,
    "dependentSchemas": {
      "native_item_fields": {
        "$comment": "The coherence rules of ADR-0093 D1, in the order lionmem._manifest_base checks them. native_item_fields is required, so they apply to every manifest; they sit here rather than in a top-level allOf because code generators read allOf as inheritance.",
        "allOf": [
          {
            "$comment": "id, content and tags are native and never dropped.",
            "type": "object",
            "properties": {
              "native_item_fields": {
                "type": "array",
                "allOf": [
                  {
                    "contains": {
                      "const": "id"
                    }
                  },
                  {
                    "contains": {
                      "const": "content"
                    }
                  },
                  {
                    "contains": {
                      "const": "tags"
                    }
                  }
                ]
              },
              "dropped_item_fields": {
                "type": "array",
                "not": {
                  "anyOf": [
                    {
                      "contains": {
                        "const": "id"
                      }
                    },
                    {
                      "contains": {
                        "const": "content"
                      }
                    },
                    {
                      "contains": {
                        "const": "tags"
                      }
                    }
                  ]
                }
              }
            }
          },
          {
            "$comment": "created_at is classified exactly once.",
            "oneOf": [
              {
                "type": "object",
                "properties": {
                  "native_item_fields": {
                    "type": "array",
                    "contains": {
                      "const": "created_at"
                    }
                  }
                }
              },
              {
                "type": "object",
                "properties": {
                  "dropped_item_fields": {
                    "type": "array",
                    "contains": {
                      "const": "created_at"
                    }
                  }
                }
              }
            ]
          },
          {
            "$comment": "metadata is classified exactly once.",
            "oneOf": [
              {
                "type": "object",
                "properties": {
                  "native_item_fields": {
                    "type": "array",
                    "contains": {
                      "const": "metadata"
                    }
                  }
                }
              },
              {
                "type": "object",
                "properties": {
                  "dropped_item_fields": {
                    "type": "array",
                    "contains": {
                      "const": "metadata"
                    }
                  }
                }
              }
            ]
          },
          {
            "$comment": "Preserved metadata must be a native field.",
            "if": {
              "type": "object",
              "properties": {
                "preserves_metadata": {
                  "const": true
                }
              }
            },
            "then": {
              "type": "object",
              "properties": {
                "native_item_fields": {
                  "type": "array",
                  "contains": {
                    "const": "metadata"
                  }
                }
              }
            }
          },
          {
            "$comment": "Full retrieve fidelity preserves every item field.",
            "if": {
              "type": "object",
              "properties": {
                "retrieve_fidelity": {
                  "const": "full"
                }
              }
            },
            "then": {
              "type": "object",
              "properties": {
                "dropped_item_fields": {
                  "type": "array",
                  "maxItems": 0
                },
                "preserves_metadata": {
                  "const": true
                }
              }
            }
          },
          {
            "$comment": "Full search fidelity preserves every item field and the tags.",
            "if": {
              "type": "object",
              "properties": {
                "search_fidelity": {
                  "const": "full"
                }
              }
            },
            "then": {
              "type": "object",
              "properties": {
                "dropped_item_fields": {
                  "type": "array",
                  "maxItems": 0
                },
                "search_returns_tags": {
                  "const": true
                },
                "preserves_metadata": {
                  "const": true
                }
              }
            }
          },
          {
            "$comment": "Accepting every filter key leaves nothing to list.",
            "if": {
              "type": "object",
              "properties": {
                "supports_any_filter_key": {
                  "const": true
                }
              },
              "required": [
                "supports_any_filter_key"
              ]
            },
            "then": {
              "type": "object",
              "properties": {
                "supported_filters": {
                  "type": "array",
                  "maxItems": 0
                }
              }
            }
          }
        ]
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
