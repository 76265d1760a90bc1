/* Generated from schema/memory_query.json by tools/generate.py: do not edit by hand.
 * Regenerate with `python tools/generate.py`; `python tools/generate.py --check` finds drift. */

/**
 * A search request: optional text, tags and metadata filters, combined with AND, then a limit. Unknown properties are rejected.
 */
export interface MemoryQuery {
  /**
   * Case-insensitive substring to find in each item's content; null or an empty string applies no text predicate.
   */
  text?: string | null;
  /**
   * Any-of tag match: an item matches when it carries at least one of these tags; null or an empty list applies no tag predicate.
   */
  tags?: string[] | null;
  /**
   * All-of metadata equality: every key must equal the item's metadata value, a missing key counting as null; null or an empty object applies no filter.
   */
  filters?: {
    [k: string]: unknown;
  } | null;
  /**
   * Maximum number of results, applied last as a Python slice stop: 0 returns nothing and a negative value drops that many matches from the end (external adapters reject negative values).
   */
  limit?: number;
}
