"""The official Python SDK (`mcp`, pinned in requirements.txt) against the native host.

`ClientSession` over `streamable_http_client` (v2's name for v1's `streamablehttp_client`) with
the Bearer key on the HTTP client, in both protocol eras:

- "handshake": `ClientSession.initialize()` — the 2025-11-25 handshake, answered without a session;
- "modern": `ClientSession.discover()` — 2026-07-28, stateless, per-request `_meta` and headers.

The environment comes from scripts/mcp-tests.sh (MCP_URL, MCP_READ_KEY, MCP_TOOLS_KEY). Tool
cases and the strict expected-failure list are shared with the TypeScript suite.
"""

from __future__ import annotations

import json
import os
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession, MCPError, types
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
URL = os.environ.get("MCP_URL", "")
READ_KEY = os.environ.get("MCP_READ_KEY", "")
TOOLS_KEY = os.environ.get("MCP_TOOLS_KEY", "")
MODERN = "2026-07-28"
SUPPORTED = [MODERN, "2025-11-25", "2025-06-18", "2025-03-26"]
ERAS = ["handshake", "modern"]

CASES = json.loads((HERE.parent / "tool-cases.json").read_text())
TOOLS: dict[str, dict[str, Any]] = CASES["tools"]
LEAK_MARKERS: list[str] = CASES["leakMarkers"]
VISIBLE_SLUGS: list[str] = CASES["visibleSlugs"]
# resources/read of a page that is missing or restricted: -32002 before 2026-07-28, -32602 from it (SEP-2164).
NOT_FOUND = {"handshake": -32002, "modern": -32602}
VERSION = "com.wikantik/version"
EXPECTED_FAILURES = {
    line.split("#", 1)[0].strip()
    for line in Path(os.environ.get("MCP_EXPECTED_FAILURES", HERE.parent / "expected-failures.txt")).read_text().splitlines()
} - {""}
CATALOG = [
    "assemble_bundle", "get_briefing", "retrieve_context", "read_pages", "get_page", "list_pages",
    "list_metadata_values", "list_clusters", "list_tags", "list_pages_by_filter", "get_page_by_id",
    "get_page_for_agent", "list_stale_citations", "discover_schema", "query_nodes", "get_node",
    "traverse", "search_knowledge", "find_similar", "get_ontology", "sparql_query",
]
INVALID_CALLS = [
    ("assemble_bundle", {}),
    ("assemble_bundle", {"query": "x", "k": "twelve"}),
    ("read_pages", {"slugs": []}),
    ("get_briefing", {"budget": "lots"}),
    ("sparql_query", {"query": "ASK {}", "format": "pretty"}),
    ("discover_schema", {"unexpected": True}),
]


def test_environment():
    assert URL and READ_KEY and TOOLS_KEY, "run through scripts/mcp-tests.sh (MCP_URL, MCP_READ_KEY, MCP_TOOLS_KEY)"
    assert EXPECTED_FAILURES <= set(TOOLS), f"unknown tools in expected-failures.txt: {EXPECTED_FAILURES - set(TOOLS)}"
    assert list(TOOLS) == CATALOG, "tool-cases.json must hold one case per catalog tool, in catalog order"


@asynccontextmanager
async def session(key: str | None, era: str):
    """A connected ClientSession plus the HTTP statuses its requests got."""
    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, event_hooks={"response": [record]}, timeout=30) as http:
        async with streamable_http_client(URL, http_client=http) as (read, write):
            async with ClientSession(read, write, client_info=types.Implementation(name="wikantik-mcp-tests-py", version="0")) as s:
                yield s, statuses


async def connect(s: ClientSession, era: str) -> None:
    if era == "handshake":
        await s.initialize()
    else:
        await s.discover()


# ---------------------------------------------------------------------------------------------
# Connecting and listing


@pytest.mark.parametrize("era", ERAS)
async def test_connect(era):
    async with session(READ_KEY, era) as (s, _):
        await connect(s, era)
        assert s.server_info is not None and s.server_info.name == "wikantik-knowledge"
        if era == "handshake":
            assert s.protocol_version == "2025-11-25"
            assert s.initialize_result.instructions and "assemble_bundle" in s.initialize_result.instructions
        else:
            assert s.protocol_version == MODERN
            assert list(s.discover_result.supported_versions) == SUPPORTED
        caps = s.server_capabilities
        assert caps is not None and caps.tools is not None and caps.tools.list_changed is False
        assert caps.resources is not None and (caps.resources.subscribe, caps.resources.list_changed) == (False, False)
        assert caps.prompts is not None and caps.prompts.list_changed is False
        assert caps.completions is not None


@pytest.mark.parametrize("era", ERAS)
async def test_list_tools(era):
    async with session(READ_KEY, era) as (s, _):
        await connect(s, era)
        result = await s.list_tools()
        # The catalog, or a subsequence of it in catalog order (a host may leave out groups whose
        # shards an index lacks), always with the two primary tools.
        names = [t.name for t in result.tools]
        assert names == [n for n in CATALOG if n in names], names
        assert {"assemble_bundle", "get_briefing"} <= set(names)
        for t in result.tools:
            a = t.annotations
            assert a is not None, t.name
            assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint) == (True, False, True, False), t.name
            assert t.title and t.title == a.title, t.name
            assert t.input_schema["type"] == "object", t.name
            assert t.output_schema is None, t.name


# ---------------------------------------------------------------------------------------------
# Calling every tool


def type_of(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def check_json_shape(tool: str, v: Any, c: dict[str, Any]) -> None:
    assert isinstance(v, dict), f"{tool}: payload is {type_of(v)}"
    for k in c.get("keys", []):
        assert k in v, f"{tool}: missing key {k!r} (has {sorted(v)})"
    for k, want in c.get("equals", {}).items():
        assert v[k] == want, f"{tool}: {k} = {v[k]!r}, want {want!r}"
    for k in c.get("nonEmpty", []):
        assert isinstance(v.get(k), list) and v[k], f"{tool}: {k!r} is not a non-empty array"
    for k, item_keys in c.get("arrays", {}).items():
        assert isinstance(v.get(k), list), f"{tool}: {k!r} is not an array"
        for i, item in enumerate(v[k]):
            assert isinstance(item, dict), f"{tool}: {k}[{i}] is not an object"
            for ik in item_keys:
                assert ik in item, f"{tool}: {k}[{i}] lacks {ik!r}"
    for k, obj_keys in c.get("objects", {}).items():
        assert isinstance(v.get(k), dict), f"{tool}: {k!r} is not an object"
        for ok in obj_keys:
            assert ok in v[k], f"{tool}: {k} lacks {ok!r}"
    for k, t in c.get("types", {}).items():
        assert type_of(v.get(k)) == t, f"{tool}: type of {k!r} is {type_of(v.get(k))}, want {t}"
    for path, allowed in c.get("enums", {}).items():
        if "[]." in path:
            arr, field = path.split("[].")
            values = [x.get(field) for x in v.get(arr, [])]
        else:
            node: Any = v
            for part in path.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            values = [node]
        for x in values:
            assert x in allowed, f"{tool}: {path} = {x!r} not in {allowed}"


def check_tool_result(tool: str, result: types.CallToolResult) -> None:
    c = TOOLS[tool]
    text = result.content[0].text if result.content and result.content[0].type == "text" else None
    assert not result.is_error, f"{tool}: isError: {(text or '')[:300]}"
    assert len(result.content) == 1 and text is not None, f"{tool}: expected one text block"
    for marker in LEAK_MARKERS:
        assert marker not in text, f"{tool}: leaks restricted marker {marker!r}"
    if c["kind"] == "markdown":
        assert text.startswith(c["startsWith"]), f"{tool}: text starts {text[:60]!r}"
        assert result.structured_content is None, f"{tool}: markdown tools carry no structuredContent"
        return
    parsed = json.loads(text)
    check_json_shape(tool, parsed, c)
    if c["kind"] == "json":
        assert result.structured_content == parsed, f"{tool}: structuredContent differs from the text JSON"
    else:
        assert result.structured_content is None, f"{tool}: unexpected structuredContent"


def tool_params():
    for era in ERAS:
        for tool in TOOLS:
            marks = (
                [pytest.mark.xfail(strict=True, reason=f"{tool} is listed in expected-failures.txt (delete the line when this XPASSes)")]
                if tool in EXPECTED_FAILURES
                else []
            )
            yield pytest.param(era, tool, marks=marks, id=f"{era}-{tool}")


@pytest.mark.parametrize(("era", "tool"), list(tool_params()))
async def test_tool_documented_shape(era, tool):
    async with session(READ_KEY, era) as (s, _):
        await connect(s, era)
        check_tool_result(tool, await s.call_tool(tool, TOOLS[tool]["args"]))


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("tool", "args"), INVALID_CALLS, ids=[f"{t}-{json.dumps(a)}" for t, a in INVALID_CALLS])
async def test_schema_invalid_call_is_a_tool_error(era, tool, args):
    async with session(READ_KEY, era) as (s, _):
        await connect(s, era)
        result = await s.call_tool(tool, args)
        assert result.is_error is True
        assert "input validation failed" in result.content[0].text


@pytest.mark.parametrize("era", ERAS)
async def test_assemble_bundle_honours_k_and_budget(era):
    query = TOOLS["assemble_bundle"]["args"]["query"]
    async with session(READ_KEY, era) as (s, _):
        await connect(s, era)
        three = (await s.call_tool("assemble_bundle", {"query": query, "k": 3})).structured_content
        assert len(three["sections"]) == 3 and three["coverage"]["sectionCount"] == 3
        budgeted = (await s.call_tool("assemble_bundle", {"query": query, "budget": 200})).structured_content
        tokens = sum(-(-len(x["text"].encode("utf-16-le")) // 8) for x in budgeted["sections"])
        assert tokens <= 200, f"budget 200 but the sections hold {tokens} tokens"
        assert len(budgeted["sections"]) < 12


@pytest.mark.parametrize("era", ERAS)
async def test_unknown_tool_is_a_protocol_error(era):
    async with session(READ_KEY, era) as (s, _):
        await connect(s, era)
        with pytest.raises(MCPError) as e:
            await s.call_tool("no_such_tool", {})
        assert e.value.error.code == -32602


# ---------------------------------------------------------------------------------------------
# Auth: the SDK surfaces a non-JSON-RPC 401/403 as an MCPError; the HTTP status is checked on the wire.


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("key", "status"),
    [(None, 401), (f"wkk_{'A' * 43}", 401), ("TOOLS", 403)],
    ids=["no-key-401", "unknown-key-401", "tools-scope-403"],
)
async def test_auth_failures_surface_as_errors(era, key, status):
    key = TOOLS_KEY if key == "TOOLS" else key
    async with session(key, era) as (s, statuses):
        with pytest.raises(MCPError):
            await connect(s, era)
        assert statuses and statuses[0] == status, statuses


# ---------------------------------------------------------------------------------------------
# Resources (every page the key may view), completion and prompts


def assert_no_leak(what: str, text: str) -> None:
    for marker in LEAK_MARKERS:
        assert marker not in text, f"{what}: leaks restricted marker {marker!r}"


async def all_resources(s: ClientSession) -> list[types.Resource]:
    result = await s.list_resources()
    resources = list(result.resources)
    while result.next_cursor:
        result = await s.list_resources(params=types.PaginatedRequestParams(cursor=result.next_cursor))
        resources.extend(result.resources)
    return resources


@pytest.mark.parametrize("era", ERAS)
async def test_every_viewable_page_is_a_readable_resource(era):
    async with session(READ_KEY, era) as (s, _):
        await connect(s, era)
        resources = await all_resources(s)
        assert [r.name for r in resources] == VISIBLE_SLUGS
        hub = next(r for r in resources if r.name == "Architecture Hub")
        assert (str(hub.uri), hub.title, hub.mime_type) == ("wiki://page/Architecture%20Hub", "Architecture Hub", "text/markdown")
        assert next(r for r in resources if r.name == "LegacyExport").mime_type == "text/html"
        for r in resources:
            result = await s.read_resource(str(r.uri))
            assert len(result.contents) == 1, r.uri
            content = result.contents[0]
            assert str(content.uri) == str(r.uri) and content.mime_type == r.mime_type
            assert isinstance(content.text, str) and len(content.text) > 100, r.uri
            assert content.meta[VERSION] == r.meta[VERSION] >= 1, r.uri
            assert_no_leak(f"resources/read {r.uri}", content.text)


@pytest.mark.parametrize("era", ERAS)
async def test_a_restricted_resource_reads_like_a_missing_one(era):
    async with session(READ_KEY, era) as (s, _):
        await connect(s, era)
        with pytest.raises(MCPError) as restricted:
            await s.read_resource("wiki://page/RotateAnApiKey")
        with pytest.raises(MCPError) as missing:
            await s.read_resource("wiki://page/RotateAnApiKez")
        assert restricted.value.error.code == missing.value.error.code == NOT_FOUND[era]
        assert restricted.value.error.message == missing.value.error.message == "Resource not found"
        assert restricted.value.error.data == {"uri": "wiki://page/RotateAnApiKey"}


@pytest.mark.parametrize("era", ERAS)
async def test_page_template_and_slug_completion(era):
    async with session(READ_KEY, era) as (s, _):
        await connect(s, era)
        templates = (await s.list_resource_templates()).resource_templates
        assert [(t.name, t.uri_template) for t in templates] == [("page", "wiki://page/{slug}")]
        ref = types.ResourceTemplateReference(type="ref/resource", uri="wiki://page/{slug}")
        completion = (await s.complete(ref, {"name": "slug", "value": "r"})).completion
        assert (completion.values, completion.total, completion.has_more) == (["RetrievalHub", "RollBackABadBuild", "Runbooks Hub"], 3, False)
        pins = (await s.complete(types.PromptReference(type="ref/prompt", name="briefing"), {"name": "pins", "value": "Glossary, q"})).completion
        assert pins.values == ["Glossary, Q&A"]
        with pytest.raises(MCPError) as e:
            await s.complete(types.PromptReference(type="ref/prompt", name="no_such_prompt"), {"name": "x", "value": ""})
        assert e.value.error.code == -32602


@pytest.mark.parametrize("era", ERAS)
async def test_briefing_and_ground_prompts(era):
    async with session(READ_KEY, era) as (s, _):
        await connect(s, era)
        prompts = (await s.list_prompts()).prompts
        assert [(p.name, [(a.name, a.required) for a in p.arguments or []]) for p in prompts] == [
            ("briefing", [("pins", False), ("clusters", False), ("prompt", False)]),
            ("ground", [("question", True)]),
        ]
        briefing = await s.get_prompt("briefing", {"clusters": "retrieval", "prompt": "coverage confidence"})
        assert len(briefing.messages) == 1 and briefing.messages[0].role == "user"
        text = briefing.messages[0].content.text
        assert text.startswith("# Wiki context briefing\n")
        assert_no_leak("briefing", text)
        ground = (await s.get_prompt("ground", {"question": "how do I publish a new index"})).messages[0].content.text
        assert ground.startswith("# Grounding context from the wiki\n") and "Cite as `PublishANewIndex @ " in ground
        assert "## How to answer" in ground
        assert_no_leak("ground", ground)
        for name, arguments in [("ground", {}), ("ground", {"question": " "}), ("briefing", {}), ("no_such_prompt", {})]:
            with pytest.raises(MCPError) as e:
                await s.get_prompt(name, arguments)
            assert e.value.error.code == -32602, (name, arguments)
