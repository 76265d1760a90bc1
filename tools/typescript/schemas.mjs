// Reading lionmem's JSON schemas from a folder, for the TypeScript generator and the ajv runner.

import fs from "node:fs";
import path from "node:path";

/**
 * Every `*.json` file of `folder`, sorted by file name, as {name, file, path, id, schema}.
 * `name` is the file name without `.json` (the key Python's `lionmem.schemas()` uses).
 */
export function loadSchemas(folder) {
  const files = fs
    .readdirSync(folder)
    .filter((file) => file.endsWith(".json"))
    .sort();
  if (files.length === 0) {
    throw new Error(`no *.json schema in ${folder}`);
  }
  return files.map((file) => {
    const filePath = path.join(folder, file);
    const schema = JSON.parse(fs.readFileSync(filePath, "utf8"));
    if (typeof schema.$id !== "string") {
      throw new Error(`${filePath} has no $id: relative $refs between the schemas resolve through it`);
    }
    return { name: file.slice(0, -".json".length), file, path: filePath, id: schema.$id, schema };
  });
}
