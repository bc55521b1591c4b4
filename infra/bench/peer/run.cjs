// Runs the three peer benchmark definitions (./defs, or the directory $1) under
// aws-local-stepfunctions 3.0.0 with local JS stand-ins for the Lambda functions, one execution at
// a time, and prints one JSON object: per definition, executions/s of each timed round.
//
//   node -r ./polyfill.cjs run.cjs <definitions dir> <rounds> <seconds per round>
'use strict';
const fs = require('fs');
const path = require('path');
const { StateMachine } = require('aws-local-stepfunctions');
const inputs = require('./inputs.cjs');

const dir = process.argv[2] || path.join(__dirname, 'defs');
const rounds = Number(process.argv[3] || 5);
const seconds = Number(process.argv[4] || 1);

let seq = 0;
// The same stand-ins as sinew's side (bench/peer/inputs.cjs documents them): Prepare builds the
// envelope, each tool echoes its arguments. A local handler gets the state's effective parameters
// ({FunctionName, Payload}) and its answer is the task result, so it answers {Payload} as Lambda does.
const prepare = async ({ Payload: input }) => {
  seq++;
  return { Payload: { id: 'call_' + seq, type: input.type, [input.type]: { name: input.name, arguments: input.arguments } } };
};
const echo = async ({ Payload: input }) => ({ Payload: { name: input.name, output: input.arguments } });
const handlers = {
  tool_call: { Prepare: prepare, CallFunction: echo, CallIntegration: echo, CallApi: echo, CallSystem: echo },
  pass_chain: {},
  map1000: {},
};

async function once(sm, name, input) {
  const ex = sm.run(input, { overrides: { taskResourceLocalHandlers: handlers[name] } });
  return ex.result;
}

async function main() {
  const out = { engine: 'aws-local-stepfunctions@3.0.0', node: process.version, results: {}, cpu: {} };
  for (const name of ['tool_call', 'pass_chain', 'map1000']) {
    const def = JSON.parse(fs.readFileSync(path.join(dir, name + '.asl.json'), 'utf8'));
    const sm = new StateMachine(def);
    const input = inputs[name];
    const check = await once(sm, name, input);
    inputs.check(name, check);
    // Warm-up: one round, not counted.
    const warmEnd = Date.now() + seconds * 1000;
    while (Date.now() < warmEnd) await once(sm, name, input);
    const perSec = [];
    const perCPU = []; // executions per CPU-second of this process (user+system)
    for (let r = 0; r < rounds; r++) {
      let n = 0;
      const cpu0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      const end = t0 + BigInt(Math.round(seconds * 1e9));
      let now = t0;
      while (now < end) {
        await once(sm, name, input);
        n++;
        now = process.hrtime.bigint();
      }
      perSec.push(n / (Number(now - t0) / 1e9));
      const cu = process.cpuUsage(cpu0);
      perCPU.push(n / ((cu.user + cu.system) / 1e6));
    }
    out.results[name] = perSec;
    out.cpu[name] = perCPU;
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
