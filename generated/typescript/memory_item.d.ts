/* Generated from schema/memory_item.json by tools/generate.py: do not edit by hand.
 * Regenerate with `python tools/generate.py`; `python tools/generate.py --check` finds drift. */

import type {Element} from "./element.js";

/**
 * One unit of memory: an Element with content and tags. Unknown properties are rejected.
 */
export type MemoryItem = Element & {
  /**
   * The remembered value: any JSON value, null by default. Text search matches against its Python str() form.
   */
  content?: unknown;
  /**
   * Labels for tag search, in order; duplicates and empty strings are kept. Matching is exact and case-sensitive.
   */
  tags?: string[];
};
