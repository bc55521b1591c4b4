// An MCP client nobody in sinew wrote: the official TypeScript SDK's (@modelcontextprotocol/sdk,
// pinned in infra/package.json), for the tests of sinew's MCP routes. It lives under infra/ so
// Node finds infra/node_modules.
//
//   node infra/scripts/mcp-client.mjs <endpoint> <bearer token> '<JSON list of calls>'
//
// Each call is {"name", "arguments"?, "_meta"?}. It connects, lists the tools, makes the calls in
// order and prints one JSON object: {protocolVersion, tools: [{name, description, inputSchema}],
// calls: [{result} or {error: {code, message}}]}. A failed connection prints {connectError} and
// exits 2.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [endpoint, token, callsJSON] = process.argv.slice(2);
if (!endpoint || !token) {
  console.error("usage: node mcp-client.mjs <endpoint> <bearer token> '<JSON list of calls>'");
  process.exit(64);
}
const calls = JSON.parse(callsJSON || "[]");

const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "sinew-ts-test", version: "1.0.0" });
try {
  await client.connect(transport);
} catch (e) {
  console.log(JSON.stringify({ connectError: String(e && e.message ? e.message : e) }));
  process.exit(2);
}

const out = { protocolVersion: transport.protocolVersion ?? null, tools: [], calls: [] };
const listed = await client.listTools();
out.tools = listed.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
for (const c of calls) {
  try {
    const params = { name: c.name, arguments: c.arguments ?? {} };
    if (c._meta) params._meta = c._meta;
    out.calls.push({ result: await client.callTool(params) });
  } catch (e) {
    out.calls.push({ error: { code: e.code ?? null, message: String(e.message ?? e) } });
  }
}
await client.close();
console.log(JSON.stringify(out));
