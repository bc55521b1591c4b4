// aws-local-stepfunctions 3.0.0 calls Promise.withResolvers (Node 22); Node 20 lacks it.
if (typeof Promise.withResolvers !== 'function') Promise.withResolvers = function () { let resolve, reject; const promise = new this((a, b) => { resolve = a; reject = b; }); return { promise, resolve, reject }; };
