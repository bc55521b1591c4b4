// sinew's local console: a page of hash routes over local mode's HTTP API and the console's
// JSON routes (/console/api/...). Everything is drawn here; nothing is loaded from elsewhere.
'use strict';

const TOKEN_KEY = 'sinew.console.token';
const STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'];
const STATE_STATUSES = ['succeeded', 'retried', 'caught', 'failed', 'running', 'waiting', 'aborted'];
const main = document.getElementById('main');
let timer = null; // the current page's polling
let generation = 0; // bumped on every navigation: a late answer for an old page is dropped

// ---- the developer's token ----

function token() { return localStorage.getItem(TOKEN_KEY) || ''; }

function claims(tok) {
  try {
    const part = tok.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(part + '='.repeat((4 - part.length % 4) % 4)));
  } catch (e) { return null; }
}

function showDeveloper() {
  const c = claims(token());
  document.getElementById('developer').textContent = c ? 'developer: ' + (c.sub || '?') : 'no token';
}

// A token in the address (#token=...) is kept and taken out of the address.
function takeTokenFromHash() {
  const m = location.hash.match(/[#&?]token=([^&]+)/);
  if (!m) return false;
  localStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
  const rest = location.hash.replace(/[#&?]token=[^&]+/, '').replace(/^#?&?/, '');
  history.replaceState(null, '', location.pathname + (rest ? '#' + rest : '#/executions'));
  return true;
}

function tokenPage(message) {
  main.replaceChildren(el('div', { class: 'card' },
    el('h1', {}, 'Choose a developer'),
    el('p', {}, 'The console shows one developer\'s data, chosen by a local mode token. Make one with:'),
    el('pre', {}, 'go run ./infra/local token my-developer'),
    message ? el('div', { class: 'error' }, message) : null,
    el('textarea', { id: 'token-input', rows: 4, placeholder: 'paste the token here' }),
    el('p', {}, el('button', { class: 'primary', id: 'token-save', onclick: () => {
      const v = document.getElementById('token-input').value.trim();
      if (!claims(v)) { tokenPage('That is not a JWT.'); return; }
      localStorage.setItem(TOKEN_KEY, v);
      showDeveloper();
      if (location.hash.startsWith('#/token') || !location.hash) location.hash = '#/executions'; else route();
    } }, 'Use this token'))));
}

// ---- helpers ----

// el makes an element; it is the page's one way to draw. Data becomes text nodes and attribute
// values, never markup. An on* attribute takes only a function (never code in a string), and a
// link only a route of this page (#/...): a javascript: or data: address is dropped.
function el(tag, attrs, ...children) {
  const svgTags = ['svg', 'g', 'rect', 'path', 'text', 'title', 'defs', 'marker', 'circle', 'tspan'];
  const e = svgTags.includes(tag) ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.toLowerCase().startsWith('on')) {
      if (typeof v === 'function') e.addEventListener(k.slice(2), v);
    } else if (k.toLowerCase() !== 'href' || String(v).startsWith('#')) {
      e.setAttribute(k, v === true ? '' : v);
    }
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function pretty(v) {
  if (v === undefined) return '';
  try { return JSON.stringify(v, null, 2); } catch (e) { return String(v); }
}

function when(t) {
  if (!t) return '';
  const d = new Date(t);
  return isNaN(d) ? '' : d.toLocaleString();
}

function took(a, b) {
  const ms = (b ? new Date(b) : new Date()) - new Date(a);
  if (!(ms >= 0)) return '';
  return ms < 1000 ? ms + ' ms' : ms < 60000 ? (ms / 1000).toFixed(1) + ' s' : Math.round(ms / 60000) + ' min';
}

function badge(text, cls) { return el('span', { class: 'badge ' + (cls || text) }, text); }

function execStatusBadge(x) {
  return x.waiting && x.status === 'RUNNING' ? badge('waiting for a call', 'waiting') : badge(x.status);
}

// outcomeBadge is the tool's outcome as sinew's record says it (GET /executions), which may differ
// from Step Functions' status: a call answered with an error is "failed" here and SUCCEEDED there.
function outcomeBadge(x) {
  return x.outcome ? badge(x.outcome.replace('_', ' '), x.outcome === 'awaiting_input' ? 'waiting' : x.outcome) : el('span', { class: 'muted' }, '—');
}

function visibility(x) {
  return x.visibility === 'yours' ? badge('yours', 'yours') : badge('not sinew\'s: every local token sees it', 'everyone');
}

class APIError extends Error {
  constructor(status, body) {
    super((body && body.error && body.error.message) || ('HTTP ' + status));
    this.status = status; this.body = body;
  }
}

async function api(method, path, body) {
  const headers = { Authorization: 'Bearer ' + token() };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = text; }
  if (!r.ok) throw new APIError(r.status, data);
  return data;
}

function errorBox(e) {
  const type = e.body && e.body.error && e.body.error.type;
  return el('div', { class: 'error', 'data-error': type || '' }, (type ? type + ': ' : '') + e.message);
}

// page runs a page's loader; a 401 sends the developer to the token form.
async function page(gen, load) {
  try {
    await load();
  } catch (e) {
    if (gen !== generation) return;
    if (e.status === 401) { tokenPage('The token was refused: ' + e.message); return; }
    main.replaceChildren(errorBox(e));
  }
}

function poll(gen, ms, fn) {
  const tick = async () => {
    if (gen !== generation) return;
    let again = false;
    try { again = await fn(); } catch (e) { again = true; }
    if (again && gen === generation) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, ms);
}

// ---- the graph ----

const MARGIN = 24;

// drawGraph draws a laid-out graph (from the console's routes) as SVG; states, when given,
// colour each state by what happened to it.
function drawGraph(graph, states, selected, onSelect) {
  const right = 110; // room for loops drawn up the right side and retry notes
  const w = graph.width + 2 * MARGIN + right, h = graph.height + 2 * MARGIN;
  const svg = el('svg', { width: w, height: h, viewBox: `${-MARGIN} ${-MARGIN} ${w} ${h}`, class: 'graph', role: 'img' });
  const defs = el('defs', {});
  for (const [id, color] of [['arrow', '#8a96a3'], ['arrow-catch', '#d9822b'], ['arrow-choice', '#5b7bb5'], ['arrow-taken', '#334155'], ['arrow-retry', '#b7791f']]) {
    defs.append(el('marker', { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' },
      el('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: color })));
  }
  svg.append(defs);
  const byId = Object.fromEntries(graph.nodes.map(n => [n.id, n]));
  const status = id => (states && states[id] && states[id].status) || 'none';
  const boxes = graph.nodes.filter(n => n.box).sort((a, b) => a.depth - b.depth);
  for (const n of boxes) {
    const g = el('g', { class: 'box st-' + status(n.id), 'data-state': n.id, 'data-status': status(n.id) },
      el('rect', { x: n.x, y: n.y, width: n.w, height: n.h, rx: 10 }),
      el('text', { x: n.x + 12, y: n.y + 20 }, n.label + (n.type === 'Branch' ? '' : '  ·  ' + n.type)));
    if (n.type !== 'Branch') g.addEventListener('click', () => onSelect && onSelect(n.id));
    svg.append(g);
  }
  let backs = 0;
  for (const e of graph.edges) svg.append(drawEdge(e, graph.width, states, e.back ? backs++ : 0));
  for (const n of graph.nodes) {
    if (n.box) continue;
    if (n.type === 'Start' || n.type === 'End') {
      svg.append(el('g', { class: 'mark', 'data-state': n.id },
        el('rect', { x: n.x, y: n.y, width: n.w, height: n.h, rx: n.h / 2 }),
        el('text', { x: n.x + n.w / 2, y: n.y + n.h / 2 + 4, 'text-anchor': 'middle' }, n.label)));
      continue;
    }
    const st = status(n.id);
    const v = states && states[n.id];
    let sub = n.type;
    if (v) {
      sub += ' · ' + (st === 'waiting' ? 'waiting for a token' : st);
      if (v.count > 1) sub += ' ×' + v.count;
      const last = v.runs[v.runs.length - 1];
      if (last && last.attempts > 1) sub += ' · ' + last.attempts + ' attempts';
    }
    const g = el('g', { class: 'node st-' + st + (selected === n.id ? ' selected' : ''), 'data-state': n.id, 'data-status': st, tabindex: 0 },
      el('title', {}, n.id + (n.resource ? '\n' + n.resource : '') + (n.retry ? '\n' + n.retry : '')),
      el('rect', { class: 'shape', x: n.x, y: n.y, width: n.w, height: n.h, rx: 7 }),
      el('text', { class: 'name', x: n.x + n.w / 2, y: n.y + 19, 'text-anchor': 'middle' }, n.label),
      el('text', { class: 'sub', x: n.x + n.w / 2, y: n.y + 34, 'text-anchor': 'middle' }, sub));
    g.addEventListener('click', () => onSelect && onSelect(n.id));
    svg.append(g);
  }
  return svg;
}

function shortLabel(label) {
  const m = label.match(/^\S+ \w+ (.+)$/); // "$.call.type StringEquals "function"" -> "function"
  return (m ? m[1] : label).slice(0, 28);
}

// drawEdge draws a transition; a loop back up goes around the right of the whole graph, the
// k-th one a little further out, so that it crosses no state.
function drawEdge(e, width, states, k) {
  const [[x1, y1], [x2, y2]] = e.points;
  const ran = id => states && states[id];
  const taken = states && e.kind !== 'retry' && ran(e.from) && (ran(e.to) || e.to === '@end') && e.from !== '@start';
  const cls = 'edge ' + e.kind + (taken ? ' taken' : '');
  const marker = taken ? 'arrow-taken' : e.kind === 'catch' ? 'arrow-catch' : e.kind === 'choice' ? 'arrow-choice' : e.kind === 'retry' ? 'arrow-retry' : 'arrow';
  const g = el('g', { class: cls, 'data-from': e.from, 'data-to': e.to, 'data-kind': e.kind });
  let d, lx, ly, anchor = 'middle';
  if (e.kind === 'retry') {
    d = `M ${x1} ${y1} C ${x1 + 30} ${y1 - 8}, ${x2 + 30} ${y2 + 8}, ${x2 + 2} ${y2}`;
    lx = x1 + 20; ly = y1 - 5; anchor = 'start';
  } else if (e.back) {
    const out = width + 24 + 16 * k, r = 14;
    d = `M ${x1} ${y1} H ${out - r} Q ${out} ${y1}, ${out} ${y1 - r} V ${y2 + r} Q ${out} ${y2}, ${out - r} ${y2} H ${x2 + 2}`;
    lx = out + 4; ly = (y1 + y2) / 2; anchor = 'start';
  } else {
    const dy = Math.max(24, (y2 - y1) / 2);
    d = `M ${x1} ${y1} C ${x1} ${y1 + dy}, ${x2} ${y2 - dy}, ${x2} ${y2 - 2}`;
    lx = (x1 + x2) / 2; ly = (y1 + y2) / 2;
  }
  g.append(el('path', { d, 'marker-end': `url(#${marker})` }));
  if (e.label) {
    g.append(el('title', {}, e.label));
    if (e.kind === 'retry') g.append(el('text', { class: 'retry', x: lx, y: ly, 'text-anchor': anchor }, '↻ ' + e.label.replace(/^Retry /, '').split(' on ')[0]));
    else if (e.kind === 'choice' || e.kind === 'default') g.append(el('text', { x: lx, y: ly, 'text-anchor': anchor }, shortLabel(e.label)));
  }
  return g;
}

function legend() {
  return el('div', { class: 'legend' }, STATE_STATUSES.map(s => badge(s === 'waiting' ? 'waiting for a token' : s, s)), badge('not run', 'type'));
}

// ---- pages ----

async function machinesPage(gen) {
  const { items } = await api('GET', '/console/api/machines');
  if (gen !== generation) return;
  main.replaceChildren(el('h1', {}, 'State machines'),
    el('div', { class: 'list-cards' }, items.map(m => el('a', { class: 'card', href: '#/machines/' + encodeURIComponent(m.name), 'data-machine': m.name },
      el('h2', {}, m.name), el('div', {}, m.sinew ? badge('sinew\'s', 'yours') : badge('a user\'s own', 'everyone'), ' ', badge(m.type, 'type')),
      el('p', { class: 'muted' }, m.arn)))));
}

function findStateDef(def, name) {
  if (!def || typeof def !== 'object') return null;
  if (def.States && def.States[name]) return def.States[name];
  for (const st of Object.values(def.States || {})) {
    for (const sub of [st.ItemProcessor, st.Iterator, ...(st.Branches || [])]) {
      const found = sub && findStateDef(sub, name);
      if (found) return found;
    }
  }
  return null;
}

async function machinePage(gen, name) {
  const m = await api('GET', '/console/api/machines/' + encodeURIComponent(name));
  if (gen !== generation) return;
  let selected = null;
  const side = el('div', { class: 'card side', id: 'state-panel' }, el('p', { class: 'muted' }, 'Click a state to see its definition.'));
  const wrap = el('div', { class: 'graph-wrap', id: 'graph' });
  const render = () => {
    wrap.replaceChildren(drawGraph(m.graph, null, selected, id => { selected = id; render(); }));
    if (selected) side.replaceChildren(el('h2', {}, selected), el('pre', {}, pretty(findStateDef(m.definition, selected))));
  };
  render();
  main.replaceChildren(el('h1', {}, m.name, ' ', m.sinew ? badge('sinew\'s', 'yours') : badge('a user\'s own', 'everyone')),
    el('p', {}, el('a', { href: '#/executions?machine=' + encodeURIComponent(m.name) }, 'Its executions →')),
    el('div', { class: 'grid' }, wrap, side),
    el('details', {}, el('summary', {}, 'Definition'), el('pre', {}, pretty(m.definition))));
}

function hashQuery() {
  const i = location.hash.indexOf('?');
  return new URLSearchParams(i < 0 ? '' : location.hash.slice(i + 1));
}

async function executionsPage(gen) {
  const q = hashQuery();
  const machine = q.get('machine') || '', status = q.get('status') || '';
  const { items: machines } = await api('GET', '/console/api/machines');
  if (gen !== generation) return;
  const setFilter = () => {
    const p = new URLSearchParams();
    const m = document.getElementById('f-machine').value, s = document.getElementById('f-status').value;
    if (m) p.set('machine', m);
    if (s) p.set('status', s);
    location.hash = '#/executions' + (p.toString() ? '?' + p : '');
  };
  const table = el('div', { id: 'executions' });
  main.replaceChildren(el('h1', {}, 'Executions'),
    el('div', { class: 'filters' },
      el('label', {}, 'State machine ', el('select', { id: 'f-machine', onchange: setFilter }, el('option', { value: '' }, 'all'),
        machines.map(m => el('option', { value: m.name, selected: m.name === machine }, m.name)))),
      el('label', {}, 'Step Functions status ', el('select', { id: 'f-status', onchange: setFilter }, el('option', { value: '' }, 'all'),
        STATUSES.map(s => el('option', { value: s, selected: s === status }, s))))),
    table);
  const load = async () => {
    const p = new URLSearchParams({ limit: '100' });
    if (machine) p.set('machine', machine);
    if (status) p.set('status', status);
    const { items } = await api('GET', '/console/api/executions?' + p);
    if (gen !== generation) return false;
    table.replaceChildren(items.length === 0 ? el('p', { class: 'muted', id: 'no-executions' }, 'No executions yet.') :
      el('table', {}, el('tr', {}, ['Execution', 'State machine', 'Step Functions', 'Outcome (sinew)', 'Whose', 'Started', 'Took'].map(h => el('th', {}, h))),
        items.map(x => el('tr', { class: 'clickable', 'data-execution': x.name, onclick: () => { location.hash = execHref(x.machine, x.name); } },
          el('td', {}, el('a', { href: execHref(x.machine, x.name) }, el('code', {}, x.name))),
          el('td', {}, x.machine), el('td', { 'data-status': x.status }, execStatusBadge(x)),
          el('td', { class: 'outcome', 'data-outcome': x.outcome || '' }, outcomeBadge(x)), el('td', {}, visibility(x)),
          el('td', {}, when(x.start)), el('td', {}, took(x.start, x.stop))))));
    return true;
  };
  await load();
  poll(gen, 2000, load);
}

function execHref(machine, name) { return '#/executions/' + encodeURIComponent(machine) + '/' + encodeURIComponent(name); }

// answerForm answers a pending function call through the HTTP API's route.
function answerForm(call, onDone) {
  const id = call.call_id;
  const out = el('textarea', { rows: 3, name: 'output', 'data-field': 'output' }, '{"answer": 42}');
  const errType = el('input', { type: 'text', name: 'error-type', placeholder: 'NotAllowed', 'data-field': 'error-type' });
  const errMsg = el('input', { type: 'text', name: 'error-message', placeholder: 'the user said no', 'data-field': 'error-message' });
  const msg = el('div', {});
  let mode = 'output';
  const outRow = el('div', {}, el('div', { class: 'muted' }, 'The tool\'s result (JSON):'), out);
  const errRow = el('div', { class: 'row' }, 'error type', errType, 'message', errMsg);
  errRow.hidden = true;
  const pick = m => { mode = m; outRow.hidden = m !== 'output'; errRow.hidden = m !== 'error'; };
  const form = el('form', { class: 'answer', 'data-call': id, onsubmit: async ev => {
    ev.preventDefault();
    let body;
    if (mode === 'output') {
      try { body = { output: JSON.parse(out.value) }; } catch (e) { msg.replaceChildren(el('div', { class: 'error' }, 'The result is not JSON: ' + e.message)); return; }
    } else {
      body = { error: { type: errType.value.trim(), message: errMsg.value } };
    }
    try {
      await api('POST', '/executions/' + encodeURIComponent(call.execution_id) + '/calls/' + encodeURIComponent(id) + '/result', body);
      msg.replaceChildren(el('div', { class: 'notice', 'data-answered': id }, 'Answered. The execution resumes.'));
      form.querySelector('button[type=submit]').disabled = true;
      if (onDone) onDone();
    } catch (e) { msg.replaceChildren(errorBox(e)); }
  } },
  el('div', { class: 'row' },
    el('label', {}, el('input', { type: 'radio', name: 'mode-' + id, value: 'output', checked: true, onchange: () => pick('output') }), ' result'),
    el('label', {}, el('input', { type: 'radio', name: 'mode-' + id, value: 'error', 'data-field': 'mode-error', onchange: () => pick('error') }), ' error')),
  outRow, errRow, el('div', {}, el('button', { class: 'primary', type: 'submit' }, 'Answer ' + call.tool)), msg);
  return form;
}

function pendingCalls(x) {
  return ((x.record && x.record.pending_calls) || []).filter(c => c.status === 'pending');
}

function statePanel(x, id) {
  const v = x.states[id];
  const node = x.graph.nodes.find(n => n.id === id);
  const out = [el('h2', {}, id, ' ', v ? badge(v.status === 'waiting' ? 'waiting for a token' : v.status, v.status) : badge('not run', 'type'))];
  if (node) out.push(el('div', { class: 'kv' }, el('div', {}, 'type'), el('div', {}, node.type),
    node.resource ? [el('div', {}, 'resource'), el('div', {}, el('code', {}, node.resource))] : null,
    node.retry ? [el('div', {}, 'retry'), el('div', {}, node.retry)] : null,
    v ? [el('div', {}, 'entered'), el('div', {}, v.count + (v.count === 1 ? ' time' : ' times'))] : null));
  if (!v) { out.push(el('p', { class: 'muted' }, 'This state has not run in this execution.')); return out; }
  v.runs.slice().reverse().forEach((r, i) => {
    out.push(el('div', { class: 'run', 'data-run-status': r.status },
      v.runs.length > 1 ? el('h2', {}, 'Run ' + (v.runs.length - i) + ' ', badge(r.status, r.status)) : null,
      el('div', { class: 'kv' }, el('div', {}, 'attempts'), el('div', {}, String(r.attempts), r.attempts > 1 ? ' (' + (r.attempts - 1) + ' retried)' : ''),
        el('div', {}, 'entered'), el('div', {}, when(r.entered)),
        r.exited ? [el('div', {}, 'took'), el('div', {}, took(r.entered, r.exited))] : null),
      (r.errors || []).map(e => el('div', { class: 'error state-error' }, el('strong', {}, e.error || 'error'), e.cause ? ': ' + e.cause : '')),
      el('div', { class: 'muted' }, 'Input'), el('pre', { class: 'state-input' }, pretty(r.input)),
      r.output !== undefined ? [el('div', { class: 'muted' }, 'Output'), el('pre', { class: 'state-output' }, pretty(r.output))] : null));
  });
  return out;
}

function callCard(c, x, onAnswered) {
  const pending = pendingCalls(x).find(p => p.call_id === c.id);
  return el('div', { class: 'call st-' + c.status, 'data-call': c.id, 'data-call-status': c.status },
    el('div', { class: 'head' }, badge(c.type, 'type'), el('strong', {}, c.name || '?'), badge(c.status === 'waiting' ? 'waiting for an answer' : c.status, c.status),
      el('a', { href: execHref(x.machine, x.name) }, 'execution ' + x.name.slice(0, 13) + '…'), el('code', { class: 'muted' }, c.id)),
    c.arguments !== undefined ? el('details', {}, el('summary', {}, 'arguments'), el('pre', {}, pretty(c.arguments))) : null,
    c.result !== undefined ? [el('div', { class: 'muted' }, 'result'), el('pre', { class: 'call-result' }, pretty(c.result))] : null,
    c.error !== undefined ? el('div', { class: 'error call-error' }, pretty(c.error)) : null,
    pending ? answerForm(pending, onAnswered) : null);
}

// expressLog shows a call that ran on tool_call_express: Step Functions keeps no history of an
// Express execution, only its log lines (local mode's; on AWS, the machine's CloudWatch log group).
function expressLog(x) {
  const lines = x.logs || [];
  return [el('h2', {}, 'Express log (' + lines.length + (lines.length === 1 ? ' line)' : ' lines)')),
    el('p', { class: 'muted' }, 'This call ran on tool_call_express. Step Functions keeps no history of an Express execution: what local mode logged of it is below, and sinew\'s record above.'),
    lines.length ? el('table', { id: 'express-log' }, el('tr', {}, ['Time', 'Status', 'Took', 'Error', 'Execution'].map(h => el('th', {}, h))),
      lines.map(l => el('tr', { 'data-log-status': l.status || '' },
        el('td', {}, when(l.time)), el('td', {}, badge(l.status || '?', (l.status || '').toLowerCase())),
        el('td', {}, l.duration_ms !== undefined ? l.duration_ms + ' ms' : ''), el('td', { class: l.error ? 'error' : '' }, l.error || ''),
        el('td', {}, el('code', { class: 'muted' }, l.execution_arn || ''))))) :
      el('p', { class: 'muted', id: 'no-express-log' }, 'No log line: the execution has not ended, or local mode restarted since (the lines are kept in memory).')];
}

async function executionPage(gen, machine, name) {
  let selected = null, x = null, open = new Set();
  const head = el('div', {}), wrap = el('div', { class: 'graph-wrap', id: 'graph' }), side = el('div', { class: 'card side', id: 'state-panel' });
  const pending = el('div', { id: 'pending' }), calls = el('div', { id: 'calls' }), events = el('div', { id: 'events' });
  main.replaceChildren(head, pending, el('div', { class: 'grid' }, el('div', {}, legend(), wrap), side), calls, events);
  const render = () => {
    head.replaceChildren(el('h1', {}, 'Execution ', el('code', {}, x.name)),
      el('div', { class: 'kv' }, el('div', {}, 'Step Functions status'), el('div', { id: 'exec-status', 'data-status': x.status }, execStatusBadge(x)),
        x.sinew ? [el('div', {}, 'outcome (sinew)'), el('div', { id: 'exec-outcome', 'data-outcome': x.outcome || '' }, outcomeBadge(x))] : null,
        el('div', {}, 'state machine'), el('div', {}, el('a', { href: '#/machines/' + encodeURIComponent(x.machine) }, x.machine)),
        el('div', {}, 'whose'), el('div', {}, visibility(x)),
        el('div', {}, 'started'), el('div', {}, when(x.start), x.stop ? ' · took ' + took(x.start, x.stop) : ''),
        x.agent_id ? [el('div', {}, 'agent'), el('div', {}, el('a', { href: '#/agents/' + encodeURIComponent(x.agent_id) }, x.agent_id))] : null,
        x.session_id ? [el('div', {}, 'session'), el('div', {}, x.session_id)] : null,
        x.error ? [el('div', {}, 'error'), el('div', { class: 'error' }, x.error + (x.cause ? ': ' + x.cause : ''))] : null));
    const pc = pendingCalls(x);
    pending.replaceChildren(...(pc.length ? [el('h2', {}, 'Waiting for ' + pc.length + ' function call' + (pc.length > 1 ? 's' : ''))] : []),
      ...pc.filter(c => !x.calls.some(k => k.id === c.call_id)).map(c => el('div', { class: 'card' }, el('strong', {}, c.tool), ' ', el('code', {}, c.call_id), answerForm(c, refresh))));
    wrap.replaceChildren(drawGraph(x.graph, x.states, selected, id => { selected = id; render(); }));
    side.replaceChildren(...(selected ? statePanel(x, selected) : [el('p', { class: 'muted' }, 'Click a state to see its input, output, retries and error.'),
      el('div', { class: 'muted' }, 'Execution input'), el('pre', {}, pretty(x.input)),
      x.output !== undefined ? [el('div', { class: 'muted' }, 'Execution output'), el('pre', {}, pretty(x.output))] : null].flat().filter(Boolean)));
    calls.replaceChildren(...(x.calls.length ? [el('h2', {}, 'Tool calls'), el('div', { class: 'calls' }, x.calls.map(c => callCard(c, x, refresh)))] : []));
    if (x.status === 'UNKNOWN' && x.record) { events.replaceChildren(...expressLog(x)); return; }
    events.replaceChildren(el('h2', {}, 'History (' + x.events.length + ' events)'),
      el('table', {}, el('tr', {}, ['#', 'Type', 'State', 'Time', ''].map(h => el('th', {}, h))),
        x.events.map(ev => {
          const detail = ev.input !== undefined ? ev.input : ev.output !== undefined ? ev.output : ev.error ? { error: ev.error, cause: ev.cause } : ev.parameters;
          const row = el('tr', { 'data-event': ev.id },
            el('td', {}, String(ev.id)), el('td', {}, ev.type), el('td', {}, ev.state || ''), el('td', {}, when(ev.timestamp)),
            el('td', {}, detail !== undefined ? el('details', { open: open.has(ev.id), ontoggle: e => { e.target.open ? open.add(ev.id) : open.delete(ev.id); } },
              el('summary', {}, ev.input !== undefined ? 'input' : ev.output !== undefined ? 'output' : ev.error ? 'error' : 'parameters'), el('pre', {}, pretty(detail))) : ''));
          return row;
        })));
  };
  const load = async () => {
    const got = await api('GET', '/console/api/executions/' + encodeURIComponent(machine) + '/' + encodeURIComponent(name));
    if (gen !== generation) return false;
    // Keep a form being typed into: while one has focus, the page waits.
    if (document.activeElement && document.activeElement.closest && document.activeElement.closest('form.answer')) return true;
    x = got;
    render();
    return x.status === 'RUNNING';
  };
  const refresh = () => { setTimeout(() => { if (gen === generation) load(); }, 300); };
  await load();
  poll(gen, 1000, async () => (await load()) || (x && x.status === 'RUNNING'));
}

async function callsPage(gen) {
  const list = el('div', { class: 'calls', id: 'pending-calls' });
  main.replaceChildren(el('h1', {}, 'Pending function calls'),
    el('p', { class: 'muted' }, 'Function tools wait here for the client. Answering one sends POST /executions/{id}/calls/{call}/result, as a client would.'), list);
  const answered = new Set();
  const load = async () => {
    const { items } = await api('GET', '/calls?status=pending&limit=100');
    if (gen !== generation) return false;
    if (document.activeElement && document.activeElement.closest && document.activeElement.closest('form.answer')) return true;
    const keep = [...list.querySelectorAll('[data-answered-card]')];
    list.replaceChildren(...keep, ...(items.length === 0 && keep.length === 0 ? [el('p', { class: 'muted', id: 'no-calls' }, 'No function call is waiting.')] : []),
      ...items.filter(c => !answered.has(c.call_id)).map(c => {
        const card = el('div', { class: 'call st-waiting', 'data-call': c.call_id },
          el('div', { class: 'head' }, badge(c.type, 'type'), el('strong', {}, c.tool), badge('pending', 'pending'),
            el('a', { href: '#/exec/' + encodeURIComponent(c.execution_id), 'data-exec-link': c.execution_id }, 'execution ' + c.execution_id),
            el('span', { class: 'muted' }, 'since ' + when(c.created_at))),
          el('div', { class: 'muted' }, 'arguments'), el('pre', {}, pretty(c.arguments)),
          answerForm(c, () => { answered.add(c.call_id); card.setAttribute('data-answered-card', c.call_id); }));
        return card;
      }));
    return true;
  };
  await load();
  poll(gen, 2000, load);
}

// #/exec/ID finds which of sinew's machines ran the execution.
async function execRedirect(gen, id) {
  const x = await api('GET', '/executions/' + encodeURIComponent(id));
  if (gen !== generation) return;
  location.replace(execHref(x.workflow, id));
}

async function agentsPage(gen) {
  const { items } = await api('GET', '/agents?limit=100');
  if (gen !== generation) return;
  main.replaceChildren(el('h1', {}, 'Agents'), items.length === 0 ? el('p', { class: 'muted' }, 'No agents yet.') :
    el('div', { class: 'list-cards' }, items.map(a => el('a', { class: 'card', href: '#/agents/' + encodeURIComponent(a.id), 'data-agent': a.id },
      el('h2', {}, a.name || a.id), el('p', { class: 'muted' }, a.about || a.id)))));
}

async function agentPage(gen, id) {
  const [a, tools] = await Promise.all([api('GET', '/agents/' + encodeURIComponent(id)), api('GET', '/agents/' + encodeURIComponent(id) + '/tools?limit=100')]);
  if (gen !== generation) return;
  main.replaceChildren(el('h1', {}, a.name || a.id),
    el('div', { class: 'kv' }, el('div', {}, 'id'), el('div', {}, el('code', {}, a.id)), a.model ? [el('div', {}, 'model'), el('div', {}, a.model)] : null,
      el('div', {}, 'created'), el('div', {}, when(a.created_at))),
    el('p', {}, el('a', { href: '#/chat?agent=' + encodeURIComponent(a.id) }, 'Chat with this agent →')),
    el('h2', {}, 'Metadata'), el('p', { class: 'muted' }, 'Setup values are shown as the API answers them: redacted.'),
    el('pre', { id: 'agent-metadata' }, pretty(a.metadata || {})),
    el('h2', {}, 'Tools (' + tools.items.length + ')'),
    el('table', { id: 'agent-tools' }, el('tr', {}, ['Name', 'Type', 'Description', 'Definition'].map(h => el('th', {}, h))),
      tools.items.map(t => el('tr', { 'data-tool': t.name }, el('td', {}, el('strong', {}, t.name)), el('td', {}, badge(t.type, 'type')),
        el('td', {}, t.description || (t[t.type] && t[t.type].description) || ''),
        el('td', {}, el('details', {}, el('summary', {}, 'JSON'), el('pre', {}, pretty(t))))))),
    el('details', {}, el('summary', {}, 'The agent as the API answers it'), el('pre', {}, pretty(a))));
}

async function chatPage(gen) {
  const q = hashQuery();
  const { items: agents } = await api('GET', '/agents?limit=100');
  if (gen !== generation) return;
  let session = null, execution = null;
  const log = el('div', { class: 'chat-log', id: 'chat-log' }), live = el('div', { class: 'calls', id: 'chat-calls' }), status = el('div', {});
  const agentSel = el('select', { id: 'chat-agent' }, agents.map(a => el('option', { value: a.id, selected: a.id === q.get('agent') }, a.name || a.id)));
  const model = el('input', { type: 'text', id: 'chat-model', placeholder: 'the configured model', size: 30 });
  const input = el('textarea', { id: 'chat-input', rows: 3, placeholder: 'Say something to the agent' });
  const showHistory = async () => {
    const h = await api('GET', '/sessions/' + encodeURIComponent(session) + '/history?limit=100');
    if (gen !== generation) return;
    log.replaceChildren(...h.items.map(m => el('div', { class: 'msg ' + m.role, 'data-role': m.role },
      el('div', { class: 'role' }, m.role + (m.name ? ' · ' + m.name : '')),
      typeof m.content === 'string' ? m.content : pretty(m.content),
      m.tool_calls && m.tool_calls.length ? el('div', { class: 'muted' }, 'asked for: ' + m.tool_calls.map(t => (t.function && t.function.name) || t.name || t.type).join(', ')) : null)));
  };
  const watch = () => poll(gen, 700, async () => {
    const x = await api('GET', '/console/api/executions/agent_loop/' + encodeURIComponent(execution));
    if (gen !== generation) return false;
    if (!(document.activeElement && document.activeElement.closest && document.activeElement.closest('form.answer'))) {
      live.replaceChildren(...x.calls.map(c => callCard(c, x, () => {})));
    }
    status.replaceChildren(el('span', { id: 'chat-status', 'data-status': x.status }, 'turn ', el('a', { href: execHref('agent_loop', x.name) }, 'agent_loop ' + x.name.slice(0, 13) + '…'), ' ', execStatusBadge(x)));
    if (x.status !== 'RUNNING') { await showHistory(); return false; }
    return true;
  });
  const send = async ev => {
    ev.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    try {
      if (!session) session = (await api('POST', '/sessions', { agent_id: agentSel.value })).id;
      const body = { messages: [{ role: 'user', content: text }], async: true, auto_run_tools: true };
      if (model.value.trim()) body.model = model.value.trim();
      const r = await api('POST', '/sessions/' + encodeURIComponent(session) + '/chat', body);
      input.value = '';
      agentSel.disabled = true;
      log.append(el('div', { class: 'msg user', 'data-role': 'user' }, el('div', { class: 'role' }, 'user'), text));
      if (r && r.execution_id) { execution = r.execution_id; live.replaceChildren(); watch(); } else await showHistory();
    } catch (e) { status.replaceChildren(errorBox(e)); }
  };
  main.replaceChildren(el('h1', {}, 'Chat'),
    agents.length === 0 ? el('div', { class: 'notice' }, 'Make an agent first (POST /agents); its tools are the ones the model may call.') : '',
    el('div', { class: 'filters' }, el('label', {}, 'Agent ', agentSel), el('label', {}, 'Model ', model),
      el('button', { type: 'button', onclick: () => { session = null; execution = null; agentSel.disabled = false; log.replaceChildren(); live.replaceChildren(); status.replaceChildren(); } }, 'New session')),
    el('p', { class: 'muted' }, 'Each turn runs as agent_loop, so every tool call shows as it happens, with its execution; function calls wait for your answer here.'),
    log, live, status,
    el('form', { id: 'chat-form', onsubmit: send }, input, el('p', {}, el('button', { class: 'primary', type: 'submit', id: 'chat-send' }, 'Send'))));
}

// ---- routing ----

function route() {
  if (takeTokenFromHash()) showDeveloper();
  generation++;
  clearTimeout(timer);
  const gen = generation;
  const path = location.hash.replace(/^#/, '').split('?')[0] || '/executions';
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.nav === parts[0]);
  if (!claims(token()) || parts[0] === 'token') { tokenPage(); return; }
  main.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  const pages = {
    machines: () => parts[1] ? machinePage(gen, parts[1]) : machinesPage(gen),
    executions: () => parts[2] ? executionPage(gen, parts[1], parts[2]) : executionsPage(gen),
    exec: () => execRedirect(gen, parts[1]),
    calls: () => callsPage(gen),
    agents: () => parts[1] ? agentPage(gen, parts[1]) : agentsPage(gen),
    chat: () => chatPage(gen),
  };
  const p = pages[parts[0]];
  if (!p) { main.replaceChildren(el('div', { class: 'error' }, 'No page ' + path)); return; }
  page(gen, p);
}

document.getElementById('change-token').addEventListener('click', () => { location.hash = '#/token'; });
showDeveloper();
window.addEventListener('hashchange', route);
window.addEventListener('storage', showDeveloper);
route();
