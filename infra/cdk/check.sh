#!/usr/bin/env bash
# check.sh synth|test: the CDK app's checks, run from the repository root by `make synth` and
# `make cdk-test`.
#   synth  synthesizes the stack for real with the CDK CLI (each function's bootstrap built by go
#          build, cdk-nag AwsSolutions applied: an unacknowledged finding fails it), then runs cfn-lint
#          on the template. Until every described function exists it stops, naming the missing ones.
#   test   the Go tests of infra/cdk (assertions on the template, IAM, cdk-nag, cfn-lint),
#          asl-validator on every state machine definition, and the real synth when it can run.
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
    go test -count=1 ./...
    defs=(../../statemachines/*.asl.json)
    args=()
    for d in "${defs[@]}"; do args+=(--json-path "$d"); done
    npx --no-install asl-validator "${args[@]}"
    m=$(missing)
    if [ -n "$m" ]; then
      echo "cdk-test: the real synth waits for the functions still to be written: $m"
    else
      synth
    fi
    ;;
  *)
    echo "usage: $0 synth|test" >&2
    exit 2
    ;;
esac
