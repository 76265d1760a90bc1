/* Generated from schema/element.json by tools/generate.py: do not edit by hand.
 * Regenerate with `python tools/generate.py`; `python tools/generate.py --check` finds drift. */

/**
 * An identified, timestamped record: the base of every lionmem model. Open to extension through allOf; each leaf schema closes itself.
 */
export interface Element {
  /**
   * Identity of the element: a UUID in its canonical string form. Generated (version 4) when absent; it never changes once set.
   */
  id?: string;
  /**
   * Creation time as UTC POSIX seconds (a finite number). Set to the current time when absent; it never changes once set.
   */
  created_at?: number;
  /**
   * Free-form metadata: a JSON object with string keys. If it carries the key lion_class, its value must name the concrete class of the record.
   */
  metadata?: {
    [k: string]: unknown;
  };
}
