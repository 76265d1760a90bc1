// `lionmem mcp` through the official TypeScript SDK client over stdio: the tools it lists, a
// store/retrieve/search round trip checked field by field, the limits, and the errors.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { UUID_FORMAT } from "../../tools/typescript/ajv.mjs";
import { ROOT, python, temporaryFolder } from "./support.mjs";

const GENERATED_MCP = path.join(ROOT, "generated", "mcp");
const TOOL_NAMES = JSON.parse(fs.readFileSync(path.join(GENERATED_MCP, "index.json"), "utf8")).tools;
const DOCUMENTS = Object.fromEntries(
  TOOL_NAMES.map((name) => [
    name,
    JSON.parse(fs.readFileSync(path.join(GENERATED_MCP, `${name}.json`), "utf8")).tool,
  ]),
);

/** A connected client of a fresh `lionmem mcp` server on its own SQLite file; closed at the end. */
async function connect(t, ...extra) {
  const folder = temporaryFolder(t, "mcp-js");
  const transport = new StdioClientTransport({
    command: python(),
    args: ["-m", "lionmem", "mcp", "--db", path.join(folder, "memory.db"), ...extra],
    cwd: folder,
    stderr: "pipe",
  });
  const client = new Client({ name: "lionmem-node-test", version: "1.0.0" });
  await client.connect(transport);
  t.after(() => client.close());
  await client.listTools(); // the SDK validates structured results only for listed tools
  return { client, transport };
}

/** An ajv for draft 2020-12 in strict mode with no other schema: a bundled document must stand alone. */
function strictAjv() {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addFormat("uuid", UUID_FORMAT);
  return ajv;
}

function structured(result) {
  assert.equal(result.isError, false, JSON.stringify(result.content));
  // The text block carries the same result as JSON, for clients that read text only.
  assert.equal(result.content.length, 1);
  assert.equal(result.content[0].type, "text");
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  return result.structuredContent;
}

function errorText(result) {
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.equal(result.structuredContent, undefined);
  return result.content[0].text;
}

describe("lionmem mcp through the TypeScript SDK client (stdio)", () => {
  test("lists the five tools with the generated documents as their definitions", async (t) => {
    const { client } = await connect(t);
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ["memory_store", "memory_retrieve", "memory_search", "memory_delete", "memory_count"],
    );
    for (const tool of tools) {
      const document = DOCUMENTS[tool.name];
      assert.equal(tool.description, document.description);
      assert.equal(tool.title, document.title);
      assert.deepEqual(tool.inputSchema, document.inputSchema);
      assert.deepEqual(tool.outputSchema, document.outputSchema);
      assert.deepEqual(tool.annotations, document.annotations);
    }
  });

  test("every listed schema compiles alone in strict draft 2020-12 ajv", async (t) => {
    const { client } = await connect(t);
    const { tools } = await client.listTools();
    for (const tool of tools) {
      const ajv = strictAjv();
      assert.doesNotThrow(() => ajv.compile(tool.inputSchema), tool.name);
      assert.doesNotThrow(() => ajv.compile(tool.outputSchema), tool.name);
    }
  });

  test("stores, retrieves and searches items, every field exact", async (t) => {
    const { client } = await connect(t);
    const item = {
      id: "0b9f3a52-6c1e-4c8a-9d55-2f1e7a3b4c5d",
      created_at: 1700000000.25,
      metadata: { project: "atlas", stars: 4, nested: { ok: true, none: null } },
      content: { text: "The Atlas launch moved to Friday", parts: [1, 2.5, "three", null] },
      tags: ["launch", "atlas", "launch", ""],
    };
    const stored = structured(await client.callTool({ name: "memory_store", arguments: item }));
    assert.deepEqual(stored, { id: item.id });
    const other = structured(
      await client.callTool({ name: "memory_store", arguments: { content: "unrelated note", tags: ["misc"] } }),
    );
    assert.match(other.id, UUID_FORMAT);

    const retrieved = structured(await client.callTool({ name: "memory_retrieve", arguments: { id: item.id } }));
    assert.deepEqual(retrieved, { item });

    const byText = structured(await client.callTool({ name: "memory_search", arguments: { text: "ATLAS LAUNCH" } }));
    assert.deepEqual(byText, { items: [item], limit: 20, omitted: [] });
    const byTag = structured(await client.callTool({ name: "memory_search", arguments: { tags: ["misc", "none"] } }));
    assert.deepEqual(byTag.items.map((hit) => hit.id), [other.id]);
    const byFilter = structured(
      await client.callTool({ name: "memory_search", arguments: { filters: { project: "atlas", stars: 4 } } }),
    );
    assert.deepEqual(byFilter.items, [item]);
    const all = structured(await client.callTool({ name: "memory_search", arguments: {} }));
    assert.deepEqual(all.items.map((hit) => hit.id), [item.id, other.id]);

    assert.deepEqual(structured(await client.callTool({ name: "memory_count", arguments: {} })), { count: 2 });
    assert.deepEqual(
      structured(await client.callTool({ name: "memory_delete", arguments: { id: item.id } })),
      { deleted: true },
    );
    assert.deepEqual(
      structured(await client.callTool({ name: "memory_delete", arguments: { id: item.id } })),
      { deleted: false },
    );
    assert.deepEqual(
      structured(await client.callTool({ name: "memory_retrieve", arguments: { id: item.id } })),
      { item: null },
    );
  });

  test("a limit above --max-limit is lowered to it and the applied limit is returned", async (t) => {
    const { client } = await connect(t, "--max-limit", "3");
    for (let index = 0; index < 5; index += 1) {
      structured(await client.callTool({ name: "memory_store", arguments: { content: `note ${index}` } }));
    }
    const result = structured(await client.callTool({ name: "memory_search", arguments: { limit: 50 } }));
    assert.equal(result.limit, 3);
    assert.deepEqual(result.items.map((hit) => hit.content), ["note 0", "note 1", "note 2"]);
    const zero = structured(await client.callTool({ name: "memory_search", arguments: { limit: 0 } }));
    assert.deepEqual(zero, { items: [], limit: 0, omitted: [] });
  });

  test("bad arguments are tool errors naming the problem, and nothing is stored", async (t) => {
    const { client } = await connect(t);
    const cases = [
      ["memory_store", { content: "x", tags: [1] }, /tags\[0\]: 1 is not of type 'string'/],
      ["memory_store", { content: "x", colour: "red" }, /'colour' was unexpected/],
      ["memory_store", { id: "not-a-uuid" }, /id: 'not-a-uuid' is not a 'uuid'/],
      ["memory_store", { content: "x", metadata: { lion_class: "Other" } }, /metadata: Value error, Metadata class mismatch/],
      ["memory_retrieve", {}, /arguments: 'id' is a required property/],
      ["memory_search", { limit: -1 }, /limit must be 0 or more, got -1/],
      ["memory_search", { limit: "ten" }, /limit: 'ten' is not of type 'integer'/],
      ["memory_search", { tags: "launch" }, /tags: 'launch' is not of type 'array', 'null'/],
    ];
    for (const [name, args, pattern] of cases) {
      assert.match(errorText(await client.callTool({ name, arguments: args })), pattern, name);
    }
    assert.deepEqual(structured(await client.callTool({ name: "memory_count", arguments: {} })), { count: 0 });
  });

  test("an unknown tool is a protocol error naming the tools there are", async (t) => {
    const { client } = await connect(t);
    await assert.rejects(
      client.callTool({ name: "memory_forget", arguments: {} }),
      (error) => error instanceof McpError && error.code === -32602 && /unknown tool 'memory_forget'/.test(error.message),
    );
    assert.deepEqual(structured(await client.callTool({ name: "memory_count", arguments: {} })), { count: 0 });
  });

  test("a request over --max-request-bytes is an Invalid Request error, and the next call works", async (t) => {
    const { client } = await connect(t, "--max-request-bytes", "4096");
    await assert.rejects(
      client.callTool({ name: "memory_store", arguments: { content: "x".repeat(5000) } }, undefined, { timeout: 10000 }),
      (error) =>
        error instanceof McpError &&
        error.code === -32600 &&
        /Request too large: a request may be at most 4096 bytes/.test(error.message),
    );
    structured(await client.callTool({ name: "memory_store", arguments: { content: "x".repeat(3000) } }));
    assert.deepEqual(structured(await client.callTool({ name: "memory_count", arguments: {} })), { count: 1 });
  });

  test("a call to a server that was killed fails instead of hanging", async (t) => {
    const { client, transport } = await connect(t);
    process.kill(transport.pid, "SIGKILL");
    await assert.rejects(client.callTool({ name: "memory_count", arguments: {} }, undefined, { timeout: 10000 }));
  });
});

/** Start `lionmem mcp --http 127.0.0.1:0 ...extra`; resolve to its URL once it listens. */
async function httpServer(t, ...extra) {
  const folder = temporaryFolder(t, "mcp-js-http");
  const child = spawn(
    python(),
    ["-m", "lionmem", "mcp", "--db", path.join(folder, "memory.db"), "--http", "127.0.0.1:0", ...extra],
    { cwd: folder, stdio: ["ignore", "ignore", "pipe"] },
  );
  t.after(async () => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  });
  let output = "";
  for await (const chunk of child.stderr) {
    output += chunk;
    const found = output.match(/ at (http:\/\/\S+)\n/);
    if (found !== null) {
      return found[1];
    }
  }
  throw new Error(`the server ended before it listened: ${output}`);
}

describe("lionmem mcp through the TypeScript SDK client (streamable HTTP)", () => {
  const token = "node-test-token";

  test("with the bearer token, stores and searches", async (t) => {
    const url = await httpServer(t, "--token", token);
    const client = new Client({ name: "lionmem-node-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    t.after(() => client.close());
    await client.listTools();
    const item = { content: { over: "http" }, tags: ["http"], metadata: { n: 1 } };
    const { id } = structured(await client.callTool({ name: "memory_store", arguments: item }));
    const found = structured(await client.callTool({ name: "memory_search", arguments: { tags: ["http"] } }));
    assert.equal(found.items.length, 1);
    assert.deepEqual({ ...found.items[0], created_at: undefined }, { ...item, id, created_at: undefined });
  });

  test("without the token the client cannot connect", async (t) => {
    const url = await httpServer(t, "--token", token);
    const client = new Client({ name: "lionmem-node-test", version: "1.0.0" });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(url))), /401|Unauthorized|bearer/i);
  });
});
