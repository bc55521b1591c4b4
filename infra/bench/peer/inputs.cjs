// The inputs both engines run (inputs.json, which sinewbench reads too) and the check of each
// result.
'use strict';
const inputs = require('./inputs.json');
module.exports = {
  ...inputs,
  check(name, result) {
    const ok = {
      tool_call: (r) => r && r.type === 'integration' && r.name === 'dummy' && r.output && r.output.city === 'Lisbon',
      pass_chain: (r) => r && r.step === 10 && r.prev === 9,
      map1000: (r) => Array.isArray(r) && r.length === 1000 && r[999].i === 999 && r[0].ok === true,
    }[name];
    if (!ok(result)) throw new Error(name + ': unexpected result ' + JSON.stringify(result).slice(0, 300));
  },
};
