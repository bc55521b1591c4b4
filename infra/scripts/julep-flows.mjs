// Calls every resource method of Julep's own TypeScript SDK (@julep/sdk, pinned in
// infra/package.json) once against sinew: node julep-flows.mjs BASE_URL TOKEN. A flow is one SDK
// method as a Julep user calls it; the methods are enumerated from the client itself, so a method
// the SDK has and this script does not call is reported as missing. It prints one JSON object:
// {methods, flows: [{name, ok, skipped, status?, error?}]}.
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';

const require = createRequire(import.meta.url);
const { Julep } = require('../node_modules/@julep/sdk');

const [base, token] = process.argv.slice(2);
const client = new Julep({ apiKey: token, baseURL: base, maxRetries: 0, timeout: 30_000 });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// methods lists the client's resource methods as resource.path.method.
function methods(obj, prefix, out, seen) {
  for (const [k, v] of Object.entries(obj)) {
    if (k.startsWith('_') || !v || typeof v !== 'object' || seen.has(v) || !('_client' in v)) continue;
    seen.add(v);
    const name = prefix ? `${prefix}.${k}` : k;
    for (const m of Object.getOwnPropertyNames(Object.getPrototypeOf(v))) {
      if (m !== 'constructor' && typeof v[m] === 'function') out.push(`${name}.${m}`);
    }
    methods(v, name, out, seen);
  }
  return out;
}

async function all(page) {
  const out = [];
  for await (const x of page) out.push(x);
  return out;
}

// Text of an SSE answer, read until it ends or for at most a second.
async function sse(p) {
  const resp = await p.asResponse();
  if (!resp.ok) throw Object.assign(new Error(`${resp.status} ${await resp.text()}`), { status: resp.status });
  const reader = resp.body.getReader();
  const t = setTimeout(() => reader.cancel(), 1000);
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
  }
  clearTimeout(t);
  return n;
}

const s = {}; // what earlier flows made
const waitTask = { name: 'flows', main: [{ wait_for_input: { info: { q: 'go?' } } }, { evaluate: { done: '$ True' } }] };

// The flows, in the order a user would call them; each may use what the earlier ones made.
const flows = [
  ['healthz.check', () => client.healthz.check()],
  ['agents.listModels', () => client.agents.listModels()],
  ['agents.create', async () => (s.agent = await client.agents.create({ name: 'flows', about: 'every SDK flow' }))],
  ['agents.get', () => client.agents.get(s.agent.id)],
  ['agents.update', () => client.agents.update(s.agent.id, { about: 'patched' })],
  ['agents.reset', () => client.agents.reset(s.agent.id, { name: 'flows', about: 'put' })],
  ['agents.createOrUpdate', () => client.agents.createOrUpdate(randomUUID(), { name: 'made with an id' })],
  ['agents.list', () => all(client.agents.list())],
  ['agents.tools.create', async () => (s.tool = await client.agents.tools.create(s.agent.id, { name: 'ask', type: 'function', function: { parameters: { type: 'object' } } }))],
  ['agents.tools.update', () => client.agents.tools.update(s.agent.id, s.tool.id, { description: 'patched' })],
  ['agents.tools.reset', () => client.agents.tools.reset(s.agent.id, s.tool.id, { name: 'ask', type: 'function', function: { parameters: { type: 'object' } } })],
  ['agents.tools.list', () => all(client.agents.tools.list(s.agent.id))],
  ['agents.docs.create', async () => (s.doc = await client.agents.docs.create(s.agent.id, { title: 'note', content: 'Faro is sunny in June.' }))],
  ['agents.docs.list', () => all(client.agents.docs.list(s.agent.id))],
  ['agents.docs.search', () => client.agents.docs.search(s.agent.id, { text: 'sunny' })],
  ['docs.get', () => client.docs.get(s.doc.id)],
  ['docs.embed', () => client.docs.embed({ text: 'sunny' })],
  ['agents.docs.delete', () => client.agents.docs.delete(s.agent.id, s.doc.id)],
  ['agents.docs.bulkDelete', () => client.agents.docs.bulkDelete(s.agent.id, { delete_all: true })],
  ['users.create', async () => (s.user = await client.users.create({ name: 'Ada', about: 'a user' }))],
  ['users.get', () => client.users.get(s.user.id)],
  ['users.update', () => client.users.update(s.user.id, { about: 'patched' })],
  ['users.reset', () => client.users.reset(s.user.id, { name: 'Ada' })],
  ['users.createOrUpdate', () => client.users.createOrUpdate(randomUUID(), { name: 'made with an id' })],
  ['users.list', () => all(client.users.list())],
  ['users.docs.create', async () => (s.udoc = await client.users.docs.create(s.user.id, { title: 'pref', content: 'Ada likes tea.' }))],
  ['users.docs.list', () => all(client.users.docs.list(s.user.id))],
  ['users.docs.search', () => client.users.docs.search(s.user.id, { text: 'tea' })],
  ['users.docs.delete', () => client.users.docs.delete(s.user.id, s.udoc.id)],
  ['users.docs.bulkDelete', () => client.users.docs.bulkDelete(s.user.id, { delete_all: true })],
  ['sessions.create', async () => (s.session = await client.sessions.create({ agent: s.agent.id, user: s.user.id, situation: 'a test' }))],
  ['sessions.get', () => client.sessions.get(s.session.id)],
  ['sessions.update', () => client.sessions.update(s.session.id, { situation: 'patched' })],
  ['sessions.reset', () => client.sessions.reset(s.session.id, { situation: 'put' })],
  ['sessions.createOrUpdate', () => client.sessions.createOrUpdate(randomUUID(), { agent: s.agent.id })],
  ['sessions.list', () => all(client.sessions.list())],
  ['sessions.chat', () => client.sessions.chat(s.session.id, { messages: [{ role: 'user', content: 'hello' }] })],
  ['sessions.history', () => client.sessions.history(s.session.id)],
  ['sessions.render', () => client.sessions.render(s.session.id, { messages: [{ role: 'user', content: 'hello' }] })],
  ['tasks.create', async () => (s.task = await client.tasks.create(s.agent.id, waitTask))],
  ['tasks.get', () => client.tasks.get(s.task.id)],
  ['tasks.list', () => all(client.tasks.list(s.agent.id))],
  ['tasks.createOrUpdate', () => client.tasks.createOrUpdate(s.agent.id, s.task.id, { ...waitTask, description: 'updated' })],
  ['executions.create', async () => (s.exec = await client.executions.create(s.task.id, { input: {} }))],
  ['executions.get', () => client.executions.get(s.exec.id)],
  ['executions.status.get', async () => {
    for (let i = 0; i < 300; i++) {
      const e = await client.executions.status.get(s.exec.id);
      if (e.status === 'awaiting_input') return e;
      await sleep(100);
    }
    throw new Error('the execution never awaited input');
  }],
  ['executions.list', () => all(client.executions.list(s.task.id))],
  ['executions.changeStatus', () => client.executions.changeStatus(s.exec.id, { status: 'running', input: { go: true } })],
  ['executions.transitions.list', async () => (s.transitions = await all(client.executions.transitions.list(s.exec.id)))],
  ['executions.transitions.retrieve', () => client.executions.transitions.retrieve(s.exec.id, s.transitions[0].id)],
  ['executions.transitions.stream', () => sse(client.executions.transitions.stream(s.exec.id))],
  ['executions.status.stream', () => sse(client.executions.status.stream(s.exec.id))],
  ['secrets.create', async () => (s.secret = await client.secrets.create({ name: 'FLOWS_KEY', value: 'flows-secret-value', description: 'a test' }))],
  ['secrets.list', () => client.secrets.list()],
  ['secrets.update', () => client.secrets.update(s.secret.id ?? s.secret.name, { name: 'FLOWS_KEY', value: 'flows-secret-value-2', description: 'updated' })],
  ['secrets.delete', () => client.secrets.delete(s.secret.id ?? s.secret.name)],
  ['files.create', async () => (s.file = await client.files.create({ name: 'note.txt', content: Buffer.from('hello').toString('base64'), mime_type: 'text/plain' }))],
  ['files.list', () => client.files.list()],
  ['files.get', () => client.files.get(s.file.id)],
  ['files.delete', () => client.files.delete(s.file.id)],
  ['jobs.get', () => client.jobs.get(randomUUID())],
  ['projects.create', () => client.projects.create({ name: 'flows' })],
  ['projects.list', () => all(client.projects.list())],
  ['sessions.delete', () => client.sessions.delete(s.session.id)],
  ['users.delete', () => client.users.delete(s.user.id)],
  ['agents.tools.delete', () => client.agents.tools.delete(s.agent.id, s.tool.id)],
  ['agents.delete', () => client.agents.delete(s.agent.id)],
];

const out = { methods: methods(client, '', [], new Set()).sort(), flows: [] };
for (const [name, run] of flows) {
  try {
    await run();
    out.flows.push({ name, ok: true });
  } catch (err) {
    // A TypeError here is a flow that needs what an earlier flow failed to make.
    const skipped = err instanceof TypeError && err.status === undefined;
    out.flows.push({ name, ok: false, skipped, status: err?.status, error: String(err?.message ?? err).slice(0, 300) });
  }
}
console.log(JSON.stringify(out));
