#!/usr/bin/env bash
# check.sh synth|test|deploy|destroy: the CDK app's checks and its deployment, run from the
# repository root by `make synth`, `make cdk-test`, `make deploy` and `make destroy`.
#   synth  synthesizes the stack for real with the CDK CLI (each function's bootstrap built by go
#          build, cdk-nag AwsSolutions applied: an unacknowledged finding fails it), then runs cfn-lint
#          on the template. Until every described function exists it stops, naming the missing ones.
#   test   the Go tests of infra/cdk (assertions on the template, IAM, cdk-nag, cfn-lint),
#          asl-validator on every state machine definition, and the real synth when it can run.
#   deploy / destroy  cdk deploy / cdk destroy of the app in cdk.json, with the arguments given
#          (-c key=value settings; destroy needs the same stackName as the deploy). deploy first
#          runs the preflight (go run . preflight): it refuses, before CloudFormation starts, a
#          Bedrock model the Region cannot call and reservations the account's Lambda concurrency
#          cannot give.
set -euo pipefail
cd "$(dirname "$0")"
export CDK_DISABLE_VERSION_CHECK=1 CDK_DISABLE_CLI_TELEMETRY=true JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20

# The functions internal/deploy describes whose folder is not written yet (the app says).
missing() {
  go run . missing
}

synth() {
  local m
  m=$(missing)
  if [ -n "$m" ]; then
    echo "synth: not yet possible: these described functions have no functions/<name>/main.go: $m" >&2
    return 2
  fi
  rm -rf cdk.out
  npx --no-install cdk synth --quiet --no-notices "$@"
  cfn-lint --ignore-checks W3005 -- cdk.out/*.template.json
  echo "synth: cdk.out/$(cd cdk.out && ls *.template.json) (cdk-nag clean, cfn-lint clean)"
}

case "${1:-}" in
  synth)
    shift
    synth "$@"
    ;;
  test)
    go vet ./...
    go test -count=1 -timeout 40m ./...
    defs=(../../statemachines/*.asl.json)
    args=()
    for d in "${defs[@]}"; do args+=(--json-path "$d"); done
    npx --no-install asl-validator "${args[@]}"
    m=$(missing)
    if [ -n "$m" ]; then
      echo "cdk-test: the real synth waits for the functions still to be written: $m"
    else
      # The end-to-end tests' aws_lambda functions (internal/e2e) are named, so make iam-check
      # evaluates their invocations against the grant an operator's setting makes.
      synth -c SINEW_AWS_LAMBDA_FUNCTIONS='sinew-e2e-*'
    fi
    ;;
  deploy)
    shift
    m=$(missing)
    if [ -n "$m" ]; then
      echo "deploy: these described functions have no functions/<name>/main.go: $m" >&2
      exit 2
    fi
    # Notes, not refusals: the deploy itself works from either, the guide's steps may not.
    if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
      echo "note: Node.js $(node --version): the CDK's support for Node 20 ended on 2026-10-30; deploy from Node 22 or 24 where you can" >&2
    fi
    if ! aws bedrock put-use-case-for-model-access help >/dev/null 2>&1; then
      echo "note: this AWS CLI ($(aws --version 2>&1 | cut -d' ' -f1)) lacks Bedrock's model-access commands (step 2 of infra/cdk/README.md); install a current AWS CLI v2" >&2
    fi
    go run . preflight "$@"
    npx --no-install cdk deploy --no-notices "$@"
    ;;
  destroy)
    shift
    npx --no-install cdk destroy --no-notices "$@"
    ;;
  *)
    echo "usage: $0 synth|test|deploy|destroy" >&2
    exit 2
    ;;
esac
