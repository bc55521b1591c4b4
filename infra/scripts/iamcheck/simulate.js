#!/usr/bin/env node
// simulate.js: the IAM check's evaluator (driven by iamcheck's Go program). Reads on stdin
// {"star_wildcard_only": bool, "policies": {name: document}, "jobs": [{id, principal, action, resource, account, context,
// identity: [policy names], resource_policy: name|null}]} and writes on stdout one JSON line per job:
// {id, result, grants: [[policy, statement index]], explain, errors, notes}.
//
// Each job goes to @cloud-copilot/iam-simulate twice: runSimulation checks the request (the action
// exists, the resource is of a type the action takes, the context keys are the action's) and its
// core evaluator decides it with the context as given. The second is needed because runSimulation
// drops every key of the form kms:EncryptionContext:<key> as unknown to the action (its matcher of
// keys with a variable part expects a '/'): it would decide the secrets key's encryption-context
// conditions without them. The core is reached by path because the package exports only its
// entry point; the version is pinned in infra/package.json.
'use strict'
const path = require('path')
const { createRequire } = require('module')

const simMain = require.resolve('@cloud-copilot/iam-simulate')
const sim = require(simMain)
const dist = path.dirname(simMain)
const core = require(path.join(dist, 'core_engine/CoreSimulatorEngine.js'))
const { AwsRequestImpl } = require(path.join(dist, 'request/request.js'))
const { RequestContextImpl } = require(path.join(dist, 'requestContext.js'))
const { DiscoveryContextKeyConstraints } = require(path.join(dist, 'context_keys/discoveryContextKeyConstraints.js'))
const { loadPolicy } = createRequire(simMain)('@cloud-copilot/iam-policy')

// Keys runSimulation ignores that the core evaluator reads as given.
const variableKey = /^kms:encryptioncontext:/i

async function validate(job, policies) {
  const res = await sim.runSimulation({
    request: { principal: job.principal, action: job.action, resource: { resource: job.resource, accountId: job.account }, contextVariables: job.context },
    identityPolicies: job.identity.map((n) => ({ name: n, policy: policies[n] })),
    serviceControlPolicies: [], resourceControlPolicies: [],
    resourcePolicy: job.resource_policy ? policies[job.resource_policy] : undefined
  }, {})
  if (res.resultType === 'error' && res.errors?.message === 'must.use.wildcard') {
    // AWS's Service Authorization Reference lists no resource type for the action (Resource "*"
    // only), where the recording names one: said in the report, decided on the named resource.
    return { errors: [], notes: [wildcardNote] }
  }
  if (res.resultType === 'error') return { errors: [JSON.stringify(res.errors)], notes: [] }
  const ignored = (res.result?.ignoredContextKeys || []).filter((k) => !variableKey.test(k))
  return { errors: ignored.length ? ['context keys the action does not take: ' + ignored.join(', ')] : [], notes: [] }
}

const wildcardNote = 'AWS\'s Service Authorization Reference lists no resource type for this action (a policy must name Resource "*"); ' +
  'evaluated against the resource the recording names, as the stack grants it'


function decide(job, loaded) {
  return core.authorize({
    request: new AwsRequestImpl(job.principal, { resource: job.resource, accountId: job.account }, job.action, new RequestContextImpl(job.context), !!job.wildcardOnly),
    sessionPolicy: undefined,
    identityPolicies: job.identity.map((n) => loaded[n]),
    serviceControlPolicies: [], resourceControlPolicies: [],
    resourcePolicy: job.resource_policy ? loaded[job.resource_policy] : undefined,
    permissionBoundaries: undefined, vpcEndpointPolicies: undefined,
    simulationParameters: { simulationMode: 'Strict', discoveryContextKeyConstraints: new DiscoveryContextKeyConstraints([]) },
    serviceSettings: { s3: {} }
  })
}

// explain says, for each statement that names the action, what did not match: the resource, the
// principal, or which condition (operator, key, the request's value).
function explain(analysis, job) {
  const out = []
  const sections = [['identity', analysis.identityAnalysis], ['resource', analysis.resourceAnalysis]]
  for (const [kind, a] of sections) {
    if (!a) continue
    out.push(`${kind} policies: ${a.result}`)
    for (const s of [...(a.denyStatements || []), ...(a.unmatchedStatements || [])]) {
      if (!s.actionMatch) continue
      const id = `${s.policyId || kind}#${s.statement.index()}${s.statement.sid() ? ' (' + s.statement.sid() + ')' : ''}`
      const why = []
      if (!s.resourceMatch) why.push('resource does not match')
      if (s.principalMatch === 'NoMatch') why.push('principal does not match')
      if (s.conditionMatch !== 'Match') {
        for (const c of [s.explain.conditions || []].flat()) {
          if (c.matches) continue
          const v = job.context[c.conditionKeyValue] ?? Object.entries(job.context).find(([k]) => k.toLowerCase() === String(c.conditionKeyValue).toLowerCase())?.[1]
          why.push(`condition ${c.operator} ${c.conditionKeyValue} fails (request: ${v === undefined ? 'absent' : JSON.stringify(v)})`)
        }
      }
      out.push(`  ${s.statement.effect()} ${id}: ${why.join('; ') || 'matches'}`)
    }
  }
  return out.join('\n')
}

async function main() {
  let input = ''
  for await (const chunk of process.stdin) input += chunk
  const { policies, jobs, star_wildcard_only: star } = JSON.parse(input)
  const loaded = {}
  for (const [name, doc] of Object.entries(policies)) loaded[name] = loadPolicy(doc, { name })
  for (const job of jobs) {
    const { errors, notes } = await validate(job, policies)
    if (star && notes.includes(wildcardNote)) {
      // As the reference says AWS authorizes it: on no resource.
      job.resource = '*'
      job.wildcardOnly = true
      notes[0] = 'evaluated against Resource "*", as AWS\'s Service Authorization Reference lists no resource type for this action'
    }
    const analysis = decide(job, loaded)
    const grants = sim.getGrantReasons(analysis).map((g) => [g.policyType === 'resource' ? job.resource_policy : g.policyIdentifier, g.statementIndex])
    const line = { id: job.id, result: analysis.result, grants, errors, notes }
    if (analysis.result !== 'Allowed') line.explain = explain(analysis, job)
    process.stdout.write(JSON.stringify(line) + '\n')
  }
}

main().catch((e) => {
  process.stderr.write(`simulate.js: ${e.stack || e}\n`)
  process.exit(1)
})
