// Random schema-valid documents written in JavaScript, from a seeded generator (reproducible).

// Text that tends to break serialisers: controls, quotes, escapes, every UTF-8 length, combining
// marks, right-to-left scripts, joiners, the BOM, line and paragraph separators, the last code
// point. Spread into code points so that no surrogate pair is ever split (JSON text must be
// Unicode; a lone surrogate is not).
const ALPHABET = [
  ..."abcXYZ019 _-.",
  ..."\u0000\u0001\u001f\u007f\t\n\r\"'\\/",
  ..."éßÆøİıǅΟΔΟΣ Кириллица中文日本語한국어עבריתالعربية",
  ..."e\u0301\u200d\u200b\ufeff\u2028\u2029\ufffd\uffff",
  ..."🦁😀👩\u200d💻🏳️\u200d🌈\u{10ffff}",
];
const EDGE_NUMBERS = [
  0, -0, 1, -1, 0.1, -2.5e-8, 5e-324, 2.2250738585072014e-308, Number.MAX_VALUE, 2 ** 31 - 1, -(2 ** 31),
  Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 53, 2 ** 64, 1e21, -1e300,
];
// Not 1e21 or more: JSON.stringify writes those with an exponent, which the model rejects for an
// int (a listed difference: tests/vectors/memory_query/023-limit-integral-float-beyond-int64.json).
const EDGE_LIMITS = [0, -1, 1, 20, 2 ** 31 - 1, Number.MAX_SAFE_INTEGER, -(2 ** 63), 2 ** 63, 1e20];

/** mulberry32: a small, fast 32-bit generator, good enough to pick test inputs. */
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomDocuments(seed) {
  const random = generator(seed);
  const integer = (low, high) => low + Math.floor(random() * (high - low + 1));
  const pick = (values) => values[integer(0, values.length - 1)];
  const chance = (probability) => random() < probability;

  const text = (longest = 12) => Array.from({ length: integer(0, longest) }, () => pick(ALPHABET)).join("");
  // lion_class is a reserved metadata key whose value the models check: never a random one.
  const key = () => {
    const candidate = chance(0.02) ? "__proto__" : text(6);
    return candidate === "lion_class" ? "lion_class_" : candidate;
  };
  const number = () => {
    const roll = random();
    if (roll < 0.3) return pick(EDGE_NUMBERS);
    if (roll < 0.6) return integer(-1e6, 1e6);
    const value = (random() * 2 - 1) * 10 ** integer(-300, 300);
    return Number.isFinite(value) ? value : 0;
  };
  // Object.fromEntries defines own properties, so "__proto__" is a plain key as in JSON.parse.
  const object = (size, value) => Object.fromEntries(Array.from({ length: integer(0, size) }, () => [key(), value()]));
  const json = (depth = 0) => {
    const kinds = ["null", "bool", "number", "text", ...(depth < 4 ? ["list", "object", "list", "object"] : [])];
    switch (pick(kinds)) {
      case "null":
        return null;
      case "bool":
        return chance(0.5);
      case "number":
        return number();
      case "text":
        return text();
      case "list":
        return Array.from({ length: integer(0, 4) }, () => json(depth + 1));
      default:
        return object(4, () => json(depth + 1));
    }
  };
  const hex = (digits) => Array.from({ length: digits }, () => integer(0, 15).toString(16)).join("");
  // The canonical (lowercase) form: the models write UUIDs back in that form.
  const uuid = () => `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`;
  const metadata = (lionClass) => {
    const result = object(4, () => json(1));
    if (chance(0.1)) result.lion_class = lionClass;
    return result;
  };
  const tags = () => Array.from({ length: integer(0, 5) }, () => text(5));
  const createdAt = () => (chance(0.5) ? pick(EDGE_NUMBERS) : random() * 4e9);

  const element = (lionClass) => {
    const document = {};
    if (chance(0.8)) document.id = uuid();
    if (chance(0.8)) document.created_at = createdAt();
    if (chance(0.8)) document.metadata = metadata(lionClass);
    return document;
  };
  return {
    element: () => element("lionmem.Element"),
    memory_item: () => {
      const document = element("lionmem.MemoryItem");
      if (chance(0.9)) document.content = json();
      if (chance(0.8)) document.tags = tags();
      return document;
    },
    memory_query: () => {
      const document = {};
      if (chance(0.7)) document.text = chance(0.2) ? null : text();
      if (chance(0.7)) document.tags = chance(0.2) ? null : tags();
      if (chance(0.7)) document.filters = chance(0.2) ? null : metadata("x");
      if (chance(0.7)) document.limit = chance(0.5) ? pick(EDGE_LIMITS) : integer(-100, 100);
      return document;
    },
  };
}
