/* Generated from schema/memory_adapter_manifest.json by tools/generate.py: do not edit by hand.
 * Regenerate with `python tools/generate.py`; `python tools/generate.py --check` finds drift. */

/**
 * The name of one MemoryItem field.
 */
export type MemoryItemField = "id" | "created_at" | "metadata" | "content" | "tags";
/**
 * full: every MemoryItem field round-trips without adapter-defined loss. native_fields: every native field round-trips; dropped fields come back absent or defaulted as documented. lossy: at least one native field is normalised, truncated or synthesised, as the adapter documents with named fixtures.
 */
export type Fidelity = "full" | "native_fields" | "lossy";

/**
 * What an external memory adapter declares about its storage and search behaviour (ADR-0093 D1). It is immutable for the lifetime of an adapter instance and checked by lionmem's conformance suite. Unknown properties are rejected.
 */
export interface MemoryAdapterManifest {
  /**
   * Stable identifier of the adapter implementation, used in diagnostics and conformance reports; not a per-request display label.
   */
  adapter: string;
  /**
   * MemoryItem fields the service stores natively and direct retrieval returns. id, content and tags are always native.
   */
  native_item_fields: MemoryItemField[];
  /**
   * MemoryItem fields the adapter does not persist; with native_item_fields they classify every field exactly once. The adapter documents the value each comes back with.
   */
  dropped_item_fields: MemoryItemField[];
  /**
   * The exact keys accepted in MemoryQuery.filters; any other key is rejected with UnsupportedMemoryQuery before the backend is called.
   */
  supported_filters: string[];
  /**
   * True when every metadata key is accepted as a filter key (as by the reference store); supported_filters is then empty. False (the default) when only supported_filters is accepted.
   */
  supports_any_filter_key?: boolean;
  /**
   * immediate: a successful store is visible to search at once. eventual: it may be missing from search until the index converges; direct retrieval is never stale.
   */
  search_consistency: "immediate" | "eventual";
  /**
   * Fidelity of direct identity retrieval.
   */
  retrieve_fidelity: Fidelity;
  /**
   * Fidelity of search hits, which may be lower than that of direct retrieval.
   */
  search_fidelity: Fidelity;
  /**
   * Whether search hits carry the stored tags (independent of whether writes accept tags).
   */
  search_returns_tags: boolean;
  /**
   * Whether the metadata mapping round-trips exactly through store and retrieve; true requires metadata to be a native field.
   */
  preserves_metadata: boolean;
  /**
   * reference: for every query the adapter accepts with a non-negative limit, search returns the same items in the same order as lionmem's InMemoryStore holding the same writes, once the index has converged (checked by the conformance suite's reference-search profile). backend-defined (the default): matching, ranking and order are the backend's own, as the adapter documents.
   */
  search_semantics?: "reference" | "backend-defined";
}
