// Shared pieces of the TypeScript client suites: a tiny test harness with strict expected
// failures, the environment scripts/mcp-tests.sh sets, the tool cases and their shape checks,
// and raw JSON-RPC over fetch. Runs on Node 22 with type stripping (erasable syntax only).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run scripts/mcp-tests.sh)`);
  return value;
}

export const config = {
  url: env('MCP_URL'),
  readKey: env('MCP_READ_KEY'),
  toolsKey: env('MCP_TOOLS_KEY'),
};

export const MODERN = '2026-07-28';
export const HANDSHAKE_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];

// ---------------------------------------------------------------------------------------------
// Tool cases (../tool-cases.json) and the expected-failure list (../expected-failures.txt)

export interface ToolCase {
  args: Record<string, unknown>;
  kind: 'json' | 'markdown' | 'text';
  startsWith?: string;
  keys?: string[];
  equals?: Record<string, unknown>;
  nonEmpty?: string[];
  arrays?: Record<string, string[]>;
  objects?: Record<string, string[]>;
  types?: Record<string, string>;
  enums?: Record<string, unknown[]>;
}

const cases = JSON.parse(readFileSync(join(here, '..', 'tool-cases.json'), 'utf8'));
export const toolCases: Record<string, ToolCase> = cases.tools;
export const leakMarkers: string[] = cases.leakMarkers;

export const expectedFailures: Set<string> = new Set(
  readFileSync(process.env.MCP_EXPECTED_FAILURES || join(here, '..', 'expected-failures.txt'), 'utf8')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean),
);
for (const name of expectedFailures) {
  if (!toolCases[name]) throw new Error(`expected-failures.txt names '${name}', which tool-cases.json does not know`);
}

/** The catalog (shared/src/mcp/catalog.rs), in tools/list order. */
export const CATALOG = [
  'assemble_bundle', 'get_briefing', 'retrieve_context', 'read_pages', 'get_page', 'list_pages',
  'list_metadata_values', 'list_clusters', 'list_tags', 'list_pages_by_filter', 'get_page_by_id',
  'get_page_for_agent', 'list_stale_citations', 'discover_schema', 'query_nodes', 'get_node',
  'traverse', 'search_knowledge', 'find_similar', 'get_ontology', 'sparql_query',
];

/** What `initialize` and `server/discover` declare: tools, the pages as resources, prompts, completion. */
export const CAPABILITIES = {
  tools: { listChanged: false },
  resources: { subscribe: false, listChanged: false },
  prompts: { listChanged: false },
  completions: {},
};

/** The pages a key without principals may view, in slug order (tool-cases.json). */
export const VISIBLE_SLUGS: string[] = cases.visibleSlugs;

if (JSON.stringify(Object.keys(toolCases)) !== JSON.stringify(CATALOG)) {
  throw new Error('tool-cases.json must hold one case per catalog tool, in catalog order');
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** The documented shape of a parsed JSON payload (see tool-cases.json). */
export function checkJsonShape(tool: string, value: unknown, c: ToolCase): void {
  assert.equal(typeOf(value), 'object', `${tool}: payload is ${typeOf(value)}`);
  const v = value as Record<string, unknown>;
  for (const k of c.keys ?? []) assert.ok(k in v, `${tool}: missing key '${k}' (has ${Object.keys(v).join(', ')})`);
  for (const [k, want] of Object.entries(c.equals ?? {})) assert.deepEqual(v[k], want, `${tool}: ${k}`);
  for (const k of c.nonEmpty ?? []) assert.ok(Array.isArray(v[k]) && (v[k] as unknown[]).length > 0, `${tool}: '${k}' is not a non-empty array`);
  for (const [k, itemKeys] of Object.entries(c.arrays ?? {})) {
    assert.ok(Array.isArray(v[k]), `${tool}: '${k}' is not an array`);
    for (const [i, item] of (v[k] as unknown[]).entries()) {
      assert.equal(typeOf(item), 'object', `${tool}: ${k}[${i}] is not an object`);
      for (const ik of itemKeys) assert.ok(ik in (item as object), `${tool}: ${k}[${i}] lacks '${ik}'`);
    }
  }
  for (const [k, objKeys] of Object.entries(c.objects ?? {})) {
    assert.equal(typeOf(v[k]), 'object', `${tool}: '${k}' is not an object`);
    for (const ok of objKeys) assert.ok(ok in (v[k] as object), `${tool}: ${k} lacks '${ok}'`);
  }
  for (const [k, t] of Object.entries(c.types ?? {})) assert.equal(typeOf(v[k]), t, `${tool}: type of '${k}'`);
  for (const [path, allowed] of Object.entries(c.enums ?? {})) {
    const m = path.match(/^(\w+)\[\]\.(\w+)$/);
    const values = m
      ? ((v[m[1]] as Record<string, unknown>[]) ?? []).map((x) => x[m[2]])
      : [path.split('.').reduce<unknown>((o, p) => (o as Record<string, unknown>)?.[p], v)];
    for (const x of values) assert.ok(allowed.includes(x), `${tool}: ${path} = ${JSON.stringify(x)} not in ${JSON.stringify(allowed)}`);
  }
}

interface ToolResultLike {
  content?: { type: string; text?: string }[];
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * A successful `tools/call` result against its documented shape. `structured` says whether the
 * negotiated revision carries `structuredContent` (2025-06-18 and later).
 */
export function checkToolResult(tool: string, result: ToolResultLike, structured: boolean): void {
  const c = toolCases[tool];
  const text = result.content?.[0]?.text;
  assert.notEqual(result.isError, true, `${tool}: isError: ${text?.slice(0, 300)}`);
  assert.equal(result.content?.length, 1, `${tool}: expected one content block`);
  assert.equal(result.content?.[0]?.type, 'text', `${tool}: content[0] is not text`);
  assert.equal(typeof text, 'string');
  for (const marker of leakMarkers) assert.ok(!text!.includes(marker), `${tool}: leaks restricted marker '${marker}'`);
  if (c.kind === 'markdown') {
    assert.ok(text!.startsWith(c.startsWith ?? ''), `${tool}: text starts ${JSON.stringify(text!.slice(0, 60))}`);
    assert.equal(result.structuredContent, undefined, `${tool}: markdown tools carry no structuredContent`);
    return;
  }
  const parsed = JSON.parse(text!);
  checkJsonShape(tool, parsed, c);
  if (c.kind === 'json' && structured) {
    assert.deepEqual(result.structuredContent, parsed, `${tool}: structuredContent differs from the text JSON`);
  }
  if (c.kind === 'text' || !structured) {
    assert.equal(result.structuredContent, undefined, `${tool}: unexpected structuredContent`);
  }
}

/** A schema-invalid call per tool: a wrong type or a missing required property. */
export const INVALID_CALLS: [string, Record<string, unknown>][] = [
  ['assemble_bundle', {}], // query is required
  ['assemble_bundle', { query: 'x', k: 'twelve' }],
  ['read_pages', { slugs: [] }], // minItems 1
  ['get_briefing', { budget: 'lots' }],
  ['sparql_query', { query: 'ASK {}', format: 'pretty' }], // enum
  ['discover_schema', { unexpected: true }], // additionalProperties: false
];

// ---------------------------------------------------------------------------------------------
// Raw JSON-RPC over fetch

export interface RawResponse {
  status: number;
  headers: Headers;
  body: any;
}

export async function rawPost(body: unknown, headers: Record<string, string> = {}, key: string | null = config.readKey): Promise<RawResponse> {
  const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers };
  if (key) h.authorization = `Bearer ${key}`;
  const res = await fetch(config.url, { method: 'POST', headers: h, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* keep the text */
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

export function modernMeta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'wikantik-mcp-tests-raw', version: '0' },
    'io.modelcontextprotocol/clientCapabilities': {},
    ...extra,
  };
}

/** A complete 2026-07-28 request: `_meta` in the body and the standard headers. */
export async function modernCall(id: number, method: string, params: Record<string, unknown> = {}, key: string | null = config.readKey): Promise<RawResponse> {
  const headers: Record<string, string> = { 'mcp-protocol-version': MODERN, 'mcp-method': method };
  if (method === 'tools/call' || method === 'prompts/get') headers['mcp-name'] = String(params.name);
  if (method === 'resources/read') headers['mcp-name'] = String(params.uri);
  return rawPost({ jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta() } }, headers, key);
}

// ---------------------------------------------------------------------------------------------
// Harness

interface Test {
  name: string;
  fn: () => Promise<void> | void;
  xfail: string | null;
}

const tests: Test[] = [];

export function test(name: string, fn: () => Promise<void> | void): void {
  tests.push({ name, fn, xfail: null });
}

/** A check that is expected to fail (strict: passing is a failure that asks to edit the list). */
export function xtest(name: string, reason: string, fn: () => Promise<void> | void): void {
  tests.push({ name, fn, xfail: reason });
}

/** A check of `tool`'s documented shape: expected to fail while the tool is listed in expected-failures.txt. */
export function shapeTest(name: string, tool: string, fn: () => Promise<void> | void): void {
  if (expectedFailures.has(tool)) xtest(name, `${tool} is listed in expected-failures.txt`, fn);
  else test(name, fn);
}

export async function runAll(): Promise<void> {
  let passed = 0;
  let failed = 0;
  let xfailed = 0;
  for (const t of tests) {
    const started = Date.now();
    let error: unknown = null;
    try {
      await t.fn();
    } catch (e) {
      error = e;
    }
    const ms = `${Date.now() - started} ms`;
    if (t.xfail === null) {
      if (error === null) {
        passed++;
        console.log(`ok       ${t.name} (${ms})`);
      } else {
        failed++;
        console.log(`FAIL     ${t.name} (${ms})\n         ${String((error as Error)?.stack ?? error).split('\n').slice(0, 4).join('\n         ')}`);
      }
    } else if (error === null) {
      failed++;
      console.log(`XPASS    ${t.name}: unexpectedly passed (${t.xfail}); remove it from expected-failures.txt`);
    } else {
      xfailed++;
      console.log(`xfail    ${t.name}: ${String((error as Error)?.message ?? error).split('\n')[0].slice(0, 160)}`);
    }
  }
  if (process.env.MCP_COUNTS) writeFileSync(process.env.MCP_COUNTS, `${passed} ${failed}\n`);
  console.log(`typescript: ${xfailed} expected failures (expected-failures.txt)`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed === 0 && passed > 0 ? 0 : 1;
}
