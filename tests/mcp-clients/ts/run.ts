// The TypeScript client suites against the native host (scripts/mcp-tests.sh starts it):
//
//  1. `@modelcontextprotocol/sdk` (v1) Client + StreamableHTTPClientTransport — the SDK's
//     default `initialize` handshake (2025-11-25), answered without a session;
//  2. `@modelcontextprotocol/client` (v2) Client pinned to 2026-07-28 (`server/discover`, per-request
//     `_meta`, Mcp-Method/Mcp-Name headers), and in 'auto' negotiation mode;
//  3. raw fetch for the wire details neither SDK exposes (headers, status codes, error codes,
//     cache hints, the older handshake revisions).
//
// Prints one line per check and a final "N passed, N failed" line.
import assert from 'node:assert/strict';

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';

import {
  CAPABILITIES,
  CATALOG,
  HANDSHAKE_VERSIONS,
  INVALID_CALLS,
  MODERN,
  checkToolResult,
  config,
  modernCall,
  rawPost,
  runAll,
  shapeTest,
  test,
  leakMarkers,
  toolCases,
  VISIBLE_SLUGS,
} from './lib.ts';

const auth = (key: string | null) => (key ? { headers: { Authorization: `Bearer ${key}` } } : {});

// ---------------------------------------------------------------------------------------------
// Helpers

/** Every HTTP status an SDK error mentions (code, status, data.status, message, causes). */
function statusesOf(err: unknown): number[] {
  const found: number[] = [];
  let e: any = err;
  for (let depth = 0; e && depth < 5; depth++, e = e.cause) {
    for (const v of [e.code, e.status, e.data?.status, e.statusCode]) if (typeof v === 'number') found.push(v);
    for (const m of String(e.message ?? '').matchAll(/\b(40[13])\b/g)) found.push(Number(m[1]));
  }
  return found;
}

/** What `p` rejects with, or null when it resolves. */
async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (e) {
    return e ?? new Error('rejected without a reason');
  }
  return null;
}

async function expectRejectsWithStatus(what: string, p: Promise<unknown>, status: number): Promise<void> {
  const error = await rejection(p);
  assert.ok(error, `${what}: expected a failure with HTTP ${status}, but it succeeded`);
  assert.ok(statusesOf(error).includes(status), `${what}: expected HTTP ${status}, got ${String((error as Error)?.message ?? error)}`);
}

function checkToolList(tools: any[], { titles }: { titles: boolean }): void {
  // The host may leave out groups whose shards an index lacks (ToolHost docs), so the list must
  // be the catalog or a subsequence of it, in catalog order, always with the two primary tools.
  const names = tools.map((t) => t.name);
  assert.deepEqual(names, CATALOG.filter((n) => names.includes(n)), `tools/list names and order: ${names.join(', ')}`);
  assert.ok(names.includes('assemble_bundle') && names.includes('get_briefing'), 'the primary tools are listed');
  if (names.length !== CATALOG.length) console.log(`         note: the server lists ${names.length} of the ${CATALOG.length} catalog tools`);
  for (const t of tools) {
    assert.equal(t.inputSchema?.type, 'object', `${t.name}: inputSchema.type`);
    assert.equal(typeof t.description, 'string');
    assert.ok(t.description.length > 40, `${t.name}: description`);
    assert.deepEqual(
      { ro: t.annotations?.readOnlyHint, de: t.annotations?.destructiveHint, id: t.annotations?.idempotentHint, ow: t.annotations?.openWorldHint },
      { ro: true, de: false, id: true, ow: false },
      `${t.name}: annotations`,
    );
    assert.equal(typeof t.annotations?.title, 'string', `${t.name}: annotations.title`);
    if (titles) assert.equal(t.title, t.annotations.title, `${t.name}: title`);
    assert.equal(t.outputSchema, undefined, `${t.name}: no outputSchema is advertised`);
  }
}

function checkInvalidCallResult(tool: string, result: any): void {
  assert.equal(result.isError, true, `${tool}: schema-invalid arguments must give isError: true`);
  const text = result.content?.[0]?.text ?? '';
  assert.match(text, /input validation failed/, `${tool}: ${text.slice(0, 200)}`);
}

function assertNoLeak(what: string, text: string): void {
  for (const marker of leakMarkers) assert.ok(!text.includes(marker), `${what}: leaks restricted marker '${marker}'`);
}

async function expectRpcError(what: string, p: Promise<unknown>, code: number): Promise<any> {
  const error = await rejection(p);
  assert.ok(error, `${what}: expected JSON-RPC error ${code}, but it succeeded`);
  assert.equal(error.code, code, `${what}: ${String(error?.message ?? error)}`);
  return error;
}

/**
 * Resources, completion and prompts through an SDK client (v1 and v2 share these method names).
 * `notFound` is the revision's resource-not-found code: -32002 before 2026-07-28, -32602 from it.
 */
function contentTests(label: string, client: () => any, notFound: number): void {
  test(`${label}: resources/list — the pages the key may view, in slug order`, async () => {
    const { resources } = await client().listResources();
    assert.deepEqual(resources.map((r: any) => r.name), VISIBLE_SLUGS);
    const hub = resources.find((r: any) => r.name === 'Architecture Hub');
    assert.equal(hub.uri, 'wiki://page/Architecture%20Hub');
    assert.equal(hub.title, 'Architecture Hub');
    assert.equal(hub.mimeType, 'text/markdown');
    assert.ok(Number.isInteger(hub._meta?.['com.wikantik/version']) && hub._meta['com.wikantik/version'] >= 1);
    assert.equal(resources.find((r: any) => r.name === 'LegacyExport').mimeType, 'text/html');
    assertNoLeak('resources/list', JSON.stringify(resources));
  });

  test(`${label}: resources/read of every listed page — its text, version pinned`, async () => {
    const { resources } = await client().listResources();
    for (const r of resources) {
      const { contents } = await client().readResource({ uri: r.uri });
      assert.equal(contents.length, 1, r.uri);
      assert.equal(contents[0].uri, r.uri);
      assert.equal(contents[0].mimeType, r.mimeType);
      assert.ok(typeof contents[0].text === 'string' && contents[0].text.length > 100, r.uri);
      assert.equal(contents[0]._meta?.['com.wikantik/version'], r._meta['com.wikantik/version'], r.uri);
      assertNoLeak(`resources/read ${r.uri}`, contents[0].text);
    }
  });

  test(`${label}: resources/read of a restricted page is the unknown page's error (${notFound})`, async () => {
    const restricted = await expectRpcError('restricted', client().readResource({ uri: 'wiki://page/RotateAnApiKey' }), notFound);
    const unknown = await expectRpcError('unknown', client().readResource({ uri: 'wiki://page/RotateAnApiKez' }), notFound);
    assert.equal(String(restricted.message).replace('RotateAnApiKey', 'RotateAnApiKez'), String(unknown.message));
    assert.deepEqual(restricted.data, { uri: 'wiki://page/RotateAnApiKey' });
  });

  test(`${label}: resources/templates/list — wiki://page/{slug}`, async () => {
    const { resourceTemplates } = await client().listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t: any) => [t.name, t.uriTemplate]), [['page', 'wiki://page/{slug}']]);
  });

  test(`${label}: completion/complete of the template's slug`, async () => {
    const { completion } = await client().complete({ ref: { type: 'ref/resource', uri: 'wiki://page/{slug}' }, argument: { name: 'slug', value: 'r' } });
    assert.deepEqual(completion, { values: ['RetrievalHub', 'RollBackABadBuild', 'Runbooks Hub'], total: 3, hasMore: false });
    await expectRpcError('unknown template', client().complete({ ref: { type: 'ref/resource', uri: 'test://x/{id}' }, argument: { name: 'id', value: '' } }), -32602);
  });

  test(`${label}: prompts/list — briefing and ground`, async () => {
    const { prompts } = await client().listPrompts();
    assert.deepEqual(prompts.map((p: any) => [p.name, p.arguments.map((a: any) => [a.name, a.required])]), [
      ['briefing', [['pins', false], ['clusters', false], ['prompt', false]]],
      ['ground', [['question', true]]],
    ]);
    for (const p of prompts) assert.ok(p.title && p.description.length > 60, p.name);
  });

  test(`${label}: prompts/get briefing — the briefing as one user message`, async () => {
    const result = await client().getPrompt({ name: 'briefing', arguments: { clusters: 'retrieval', prompt: 'coverage confidence' } });
    assert.equal(result.messages.length, 1);
    assert.equal(result.messages[0].role, 'user');
    assert.equal(result.messages[0].content.type, 'text');
    assert.ok(result.messages[0].content.text.startsWith('# Wiki context briefing\n'));
    assertNoLeak('briefing', result.messages[0].content.text);
  });

  test(`${label}: prompts/get ground — cited sections and the coverage`, async () => {
    const result = await client().getPrompt({ name: 'ground', arguments: { question: 'how do I publish a new index' } });
    const text: string = result.messages[0].content.text;
    assert.ok(text.startsWith('# Grounding context from the wiki\n'), text.slice(0, 80));
    assert.match(text, /_Coverage: (strong|partial|weak|unknown) — \d+ sections across \d+ pages\._/);
    assert.match(text, /Cite as `PublishANewIndex @ \d+`/);
    assertNoLeak('ground', text);
  });

  test(`${label}: prompts/get with bad arguments → -32602`, async () => {
    await expectRpcError('missing question', client().getPrompt({ name: 'ground', arguments: {} }), -32602);
    await expectRpcError('unknown prompt', client().getPrompt({ name: 'no_such_prompt', arguments: {} }), -32602);
    await expectRpcError('no source', client().getPrompt({ name: 'briefing', arguments: { prompt: ' ' } }), -32602);
  });
}

// ---------------------------------------------------------------------------------------------
// 1. v1 SDK: the default handshake

async function connectV1(key: string | null): Promise<{ client: ClientV1; transport: TransportV1 }> {
  const client = new ClientV1({ name: 'wikantik-mcp-tests-ts-v1', version: '0' });
  const transport = new TransportV1(new URL(config.url), { requestInit: auth(key) });
  await client.connect(transport);
  return { client, transport };
}

let v1: { client: ClientV1; transport: TransportV1 } | null = null;
const v1c = () => {
  if (!v1) throw new Error('v1 client did not connect');
  return v1.client;
};

test('sdk v1: connect (initialize handshake, no session)', async () => {
  v1 = await connectV1(config.readKey);
  assert.equal(v1.transport.protocolVersion, '2025-11-25');
  assert.equal(v1.transport.sessionId, undefined, 'no Mcp-Session-Id');
  const info = v1.client.getServerVersion();
  assert.equal(info?.name, 'wikantik-knowledge');
  assert.equal(info?.title, 'Wikantik Knowledge Graph');
  assert.deepEqual(v1.client.getServerCapabilities(), CAPABILITIES);
  assert.match(v1.client.getInstructions() ?? '', /assemble_bundle/);
});

test('sdk v1: ping', async () => {
  assert.deepEqual(await v1c().ping(), {});
});

test('sdk v1: tools/list — the 21 catalog tools, read-only annotations', async () => {
  const { tools, nextCursor } = await v1c().listTools();
  assert.equal(nextCursor, undefined);
  checkToolList(tools, { titles: true });
});

for (const tool of Object.keys(toolCases)) {
  shapeTest(`sdk v1: tools/call ${tool} — documented shape`, tool, async () => {
    const result = await v1c().callTool({ name: tool, arguments: toolCases[tool].args });
    checkToolResult(tool, result as any, true);
  });
}

for (const [tool, args] of INVALID_CALLS) {
  test(`sdk v1: tools/call ${tool} ${JSON.stringify(args)} — schema-invalid → isError`, async () => {
    checkInvalidCallResult(tool, await v1c().callTool({ name: tool, arguments: args }));
  });
}

test('sdk v1: tools/call of an unknown tool is a protocol error (-32602)', async () => {
  await assert.rejects(v1c().callTool({ name: 'no_such_tool', arguments: {} }), (e: any) => e.code === -32602);
});

contentTests('sdk v1 (2025-11-25)', v1c, -32002);

test('sdk v1: no key → 401 surfaced as a connect error', async () => {
  await expectRejectsWithStatus('connect without a key', connectV1(null), 401);
});

test('sdk v1: unknown key → 401', async () => {
  await expectRejectsWithStatus('connect with an unknown key', connectV1(`wkk_${'A'.repeat(43)}`), 401);
});

test('sdk v1: key without an MCP scope (tools) → 403', async () => {
  await expectRejectsWithStatus('connect with a tools-only key', connectV1(config.toolsKey), 403);
});

test('sdk v1: close', async () => {
  await v1c().close();
});

// ---------------------------------------------------------------------------------------------
// 2. v2 SDK: 2026-07-28, stateless

async function connectV2(key: string | null, mode: 'auto' | { pin: string } = { pin: MODERN }): Promise<ClientV2> {
  const client = new ClientV2({ name: 'wikantik-mcp-tests-ts-v2', version: '0' }, { versionNegotiation: { mode } });
  await client.connect(new TransportV2(new URL(config.url), { requestInit: auth(key) }));
  return client;
}

let v2: ClientV2 | null = null;
const v2c = () => {
  if (!v2) throw new Error('v2 client did not connect');
  return v2;
};

test('sdk v2: connect pinned to 2026-07-28 (server/discover)', async () => {
  v2 = await connectV2(config.readKey);
  assert.equal(v2.getNegotiatedProtocolVersion(), MODERN);
  const discover: any = v2.getDiscoverResult();
  assert.ok(discover, 'a discover result');
  assert.deepEqual(discover.supportedVersions, [MODERN, ...HANDSHAKE_VERSIONS]);
  assert.deepEqual(v2.getServerCapabilities(), CAPABILITIES);
  assert.equal(v2.getServerVersion()?.name, 'wikantik-knowledge');
  assert.match(v2.getInstructions() ?? '', /assemble_bundle/);
});

test("sdk v2: 'auto' negotiation picks 2026-07-28", async () => {
  const client = await connectV2(config.readKey, 'auto');
  try {
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  } finally {
    await client.close();
  }
});

test('sdk v2: tools/list — the 21 catalog tools, read-only annotations', async () => {
  const result: any = await v2c().listTools();
  checkToolList(result.tools, { titles: true });
});

for (const tool of Object.keys(toolCases)) {
  shapeTest(`sdk v2 (2026-07-28): tools/call ${tool} — documented shape`, tool, async () => {
    const result = await v2c().callTool({ name: tool, arguments: toolCases[tool].args });
    checkToolResult(tool, result as any, true);
  });
}

for (const [tool, args] of INVALID_CALLS) {
  test(`sdk v2 (2026-07-28): tools/call ${tool} ${JSON.stringify(args)} — schema-invalid → isError`, async () => {
    checkInvalidCallResult(tool, await v2c().callTool({ name: tool, arguments: args }));
  });
}

test('sdk v2 (2026-07-28): assemble_bundle honours the advertised k and budget', async () => {
  const query = toolCases.assemble_bundle.args.query;
  const three: any = (await v2c().callTool({ name: 'assemble_bundle', arguments: { query, k: 3 } })).structuredContent;
  assert.equal(three.sections.length, 3);
  assert.equal(three.coverage.sectionCount, 3);
  const budgeted: any = (await v2c().callTool({ name: 'assemble_bundle', arguments: { query, budget: 200 } })).structuredContent;
  const tokens = budgeted.sections.reduce((n: number, s: any) => n + Math.ceil(s.text.length / 4), 0);
  assert.ok(tokens <= 200, `budget 200 but the sections hold ${tokens} tokens`);
  assert.ok(budgeted.sections.length < 12, 'a 200-token budget keeps fewer than the default 12 sections');
});

contentTests('sdk v2 (2026-07-28)', v2c, -32602);

test('sdk v2: no key → 401 surfaced as a connect error', async () => {
  await expectRejectsWithStatus('connect without a key', connectV2(null), 401);
});

test('sdk v2: key without an MCP scope (tools) → 403', async () => {
  await expectRejectsWithStatus('connect with a tools-only key', connectV2(config.toolsKey), 403);
});

test('sdk v2: close', async () => {
  await v2c().close();
});

// ---------------------------------------------------------------------------------------------
// 3. Raw fetch: the wire

test('raw 2026-07-28: server/discover', async () => {
  const r = await modernCall(1, 'server/discover');
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(r.headers.get('mcp-session-id'), null);
  const res = r.body.result;
  assert.deepEqual(res.supportedVersions, [MODERN, ...HANDSHAKE_VERSIONS]);
  assert.deepEqual(res.capabilities, CAPABILITIES);
  assert.equal(res.resultType, 'complete');
  assert.equal(res._meta['io.modelcontextprotocol/serverInfo'].name, 'wikantik-knowledge');
  assert.equal(res.cacheScope, 'public');
  assert.ok(Number.isInteger(res.ttlMs) && res.ttlMs >= 0);
  assert.match(res.instructions, /assemble_bundle/);
});

test('raw 2026-07-28: tools/list carries resultType and cache hints', async () => {
  const r = await modernCall(2, 'tools/list');
  assert.equal(r.status, 200);
  const res = r.body.result;
  assert.equal(res.resultType, 'complete');
  assert.equal(res.cacheScope, 'public');
  assert.ok(Number.isInteger(res.ttlMs));
  checkToolList(res.tools, { titles: true });
});

test('raw 2026-07-28: tools/call assemble_bundle → structuredContent with sections and coverage', async () => {
  const r = await modernCall(3, 'tools/call', { name: 'assemble_bundle', arguments: toolCases.assemble_bundle.args });
  assert.equal(r.status, 200);
  assert.equal(r.body.result.resultType, 'complete');
  checkToolResult('assemble_bundle', r.body.result, true);
});

test('raw 2026-07-28: tools/call get_briefing → markdown text', async () => {
  const r = await modernCall(4, 'tools/call', { name: 'get_briefing', arguments: toolCases.get_briefing.args });
  assert.equal(r.status, 200);
  checkToolResult('get_briefing', r.body.result, true);
});

test('raw 2026-07-28: resource lists and reads are private to the caller, template and prompt lists public', async () => {
  const hints = async (method: string, params: Record<string, unknown> = {}) => {
    const r = await modernCall(5, method, params);
    assert.equal(r.status, 200, `${method}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.result.resultType, 'complete');
    assert.ok(Number.isInteger(r.body.result.ttlMs) && r.body.result.ttlMs >= 0, method);
    return r.body.result.cacheScope;
  };
  assert.equal(await hints('resources/list'), 'private');
  assert.equal(await hints('resources/read', { uri: 'wiki://page/Glossary' }), 'private');
  assert.equal(await hints('resources/templates/list'), 'public');
  assert.equal(await hints('prompts/list'), 'public');
});

test('raw 2026-07-28: resources/read and prompts/get route on Mcp-Name', async () => {
  const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
  const read = await rawPost({ jsonrpc: '2.0', id: 6, method: 'resources/read', params: { uri: 'wiki://page/Glossary', _meta: meta } }, { 'mcp-protocol-version': MODERN, 'mcp-method': 'resources/read' });
  assert.equal(read.status, 400);
  assert.equal(read.body.error.code, -32020);
  const get = await rawPost({ jsonrpc: '2.0', id: 7, method: 'prompts/get', params: { name: 'ground', arguments: { question: 'x' }, _meta: meta } }, { 'mcp-protocol-version': MODERN, 'mcp-method': 'prompts/get', 'mcp-name': 'briefing' });
  assert.equal(get.status, 400);
  assert.equal(get.body.error.code, -32020);
});

test('raw 2025-03-26: resources and prompts without titles, resource not found is -32002', async () => {
  const post = (id: number, method: string, params: Record<string, unknown> = {}) => rawPost({ jsonrpc: '2.0', id, method, params }, { 'mcp-protocol-version': '2025-03-26' });
  const list = await post(1, 'resources/list');
  assert.equal(list.body.result.resources[0].title, undefined);
  assert.equal(list.body.result.ttlMs, undefined);
  assert.equal((await post(2, 'prompts/list')).body.result.prompts[0].title, undefined);
  const missing = await post(3, 'resources/read', { uri: 'wiki://page/EdgeRoadmap' });
  assert.deepEqual(missing.body.error, { code: -32002, message: 'Resource not found', data: { uri: 'wiki://page/EdgeRoadmap' } });
});

const mismatch = async (headers: Record<string, string>, params: Record<string, unknown>, method = 'tools/call') => {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  return rawPost({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: meta } }, headers);
};

test('raw 2026-07-28: Mcp-Name that differs from params.name → 400 HeaderMismatch (-32020)', async () => {
  const r = await mismatch({ 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'get_briefing' }, { name: 'assemble_bundle', arguments: { query: 'x' } });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32020);
});

test('raw 2026-07-28: missing Mcp-Method → 400 HeaderMismatch (-32020)', async () => {
  const r = await mismatch({ 'mcp-protocol-version': MODERN }, {}, 'tools/list');
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32020);
});

test('raw 2026-07-28: MCP-Protocol-Version header ≠ _meta version → 400 HeaderMismatch (-32020)', async () => {
  const r = await mismatch({ 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/list' }, {}, 'tools/list');
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32020);
});

test('raw: unsupported version → 400 UnsupportedProtocolVersion (-32022) listing the supported ones', async () => {
  const body = { jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01', 'io.modelcontextprotocol/clientCapabilities': {} } } };
  const r = await rawPost(body, { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32022);
  assert.deepEqual(r.body.error.data.supported, [MODERN, ...HANDSHAKE_VERSIONS]);
});

for (const method of ['no/such-method', 'ping', 'initialize']) {
  test(`raw 2026-07-28: ${method} → 404 Method not found (-32601)`, async () => {
    const r = await modernCall(9, method);
    assert.equal(r.status, 404, JSON.stringify(r.body));
    assert.equal(r.body.error.code, -32601);
  });
}

test('raw: GET and DELETE → 405 with Allow: POST', async () => {
  for (const method of ['GET', 'DELETE']) {
    const res = await fetch(config.url, { method, headers: { authorization: `Bearer ${config.readKey}`, accept: 'text/event-stream' } });
    await res.arrayBuffer();
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get('allow'), 'POST');
  }
});

for (const [asked, answered] of [['2025-11-25', '2025-11-25'], ['2025-06-18', '2025-06-18'], ['2025-03-26', '2025-03-26'], ['2024-11-05', '2025-11-25']]) {
  test(`raw handshake: initialize asking ${asked} → ${answered}, no Mcp-Session-Id`, async () => {
    const r = await rawPost({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
    assert.equal(r.status, 200);
    assert.equal(r.body.result.protocolVersion, answered);
    assert.equal(r.headers.get('mcp-session-id'), null);
  });
}

test('raw 2025-03-26: tools/call assemble_bundle has no structuredContent (added in 2025-06-18)', async () => {
  const r = await rawPost({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'assemble_bundle', arguments: toolCases.assemble_bundle.args } }, { 'mcp-protocol-version': '2025-03-26' });
  assert.equal(r.status, 200);
  checkToolResult('assemble_bundle', r.body.result, false);
});

test('raw: 401 carries WWW-Authenticate: Bearer; 403 says the key is not authorized for MCP', async () => {
  const none = await rawPost({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '2025-11-25' }, null);
  assert.equal(none.status, 401);
  assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
  const tools = await rawPost({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '2025-11-25' }, config.toolsKey);
  assert.equal(tools.status, 403);
  assert.deepEqual(tools.body, { error: 'Key not authorized for MCP' });
});

await runAll();
