// Drives sinew's Julep-shaped task API with Julep's own TypeScript SDK (@julep/sdk, pinned in
// infra/package.json): node julep-tasks.mjs BASE_URL TOKEN SPEC_JSON. SPEC is {agent_id, secret?,
// tasks: [{name, body, input, resume?, cancel?}]}; for each task it creates the task, starts an
// execution, waits for it to end (resuming a wait with executions.changeStatus when told), and
// lists its transitions. It prints one JSON object: what each call answered, or its error.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Julep } = require('../node_modules/@julep/sdk');

const [base, token, specJSON] = process.argv.slice(2);
const spec = JSON.parse(specJSON);
const client = new Julep({ apiKey: token, baseURL: base, maxRetries: 0, timeout: 60_000 });

const final = new Set(['succeeded', 'failed', 'cancelled']);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(id, done) {
  for (let i = 0; i < 600; i++) {
    const e = await client.executions.get(id);
    if (done(e)) return e;
    await sleep(100);
  }
  throw new Error(`execution ${id} did not reach the awaited status`);
}

function failure(err) {
  return { error: String(err && err.message ? err.message : err), status: err && err.status };
}

async function runTask(t) {
  const r = { name: t.name };
  try {
    r.task = await client.tasks.create(spec.agent_id, t.body);
  } catch (err) {
    return { ...r, create: failure(err) };
  }
  try {
    r.started = await client.executions.create(r.task.id, { input: t.input });
    let e = await waitFor(r.started.id, (x) => final.has(x.status) || x.status === 'awaiting_input');
    for (const answer of t.resume || []) {
      r.waited = (r.waited || []).concat([e]);
      if (e.status !== 'awaiting_input') break;
      r.resumed = (r.resumed || []).concat([await client.executions.changeStatus(e.id, { status: 'running', input: answer })]);
      await sleep(50);
      e = await waitFor(e.id, (x) => final.has(x.status) || (x.status === 'awaiting_input' && x.pending_calls?.[0]?.call_id !== r.waited.at(-1).pending_calls?.[0]?.call_id));
    }
    if (t.cancel && e.status === 'awaiting_input') {
      r.waited = [e];
      r.cancelled = await client.executions.changeStatus(e.id, { status: 'cancelled', reason: 'the test cancels it' });
      e = await waitFor(e.id, (x) => final.has(x.status));
    }
    r.execution = e;
    r.transitions = [];
    for await (const tr of client.executions.transitions.list(e.id)) r.transitions.push(tr);
    r.listed = [];
    for await (const x of client.executions.list(r.task.id)) r.listed.push(x.id);
  } catch (err) {
    r.run = failure(err);
  }
  return r;
}

const out = { tasks: [] };
try {
  if (spec.secret) out.secret = await client.secrets.create(spec.secret);
} catch (err) {
  out.secret = failure(err);
}
for (const t of spec.tasks) out.tasks.push(await runTask(t));
console.log(JSON.stringify(out));
