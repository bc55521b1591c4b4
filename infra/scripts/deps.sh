#!/usr/bin/env bash
# deps.sh: installs what the tests and the demo call and a fresh machine may lack, from the
# registries this project may reach: Go modules (go.sum pins them), npm packages
# (infra/package-lock.json pins them), Debian packages through apt.sh (a JDK for DynamoDB Local,
# ffmpeg, Chromium, the AWS CLI), and cfn-lint from PyPI. Quick when everything is already there.
# What cannot be installed stops the run with one line saying what to install and how.
set -euo pipefail
cd "$(dirname "$0")/../.."

# stop ends the run with one line: what is missing and how to install it.
stop() {
  echo "deps: $*" >&2
  exit 1
}

command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 ||
  stop "Node.js and npm are missing: install them (apt-get install nodejs npm, or https://nodejs.org/)"

# DynamoDB Local runs through a launcher that keeps it on 127.0.0.1 (internal/testenv/ddblocal),
# compiled by Java's own compiler, the module jdk.compiler: a JDK has it, a JRE may not.
if ! command -v java >/dev/null 2>&1 || ! java --list-modules 2>/dev/null | grep '^jdk\.compiler@' >/dev/null; then
  infra/scripts/apt.sh openjdk-17-jdk-headless ||
    stop "no JDK for DynamoDB Local: install one (apt-get install openjdk-17-jdk-headless)"
fi

# Debian packages the provider tests run for real: ffmpeg (the ffmpeg provider) and chromium
# (remote_browser over CDP). apt.sh does nothing when they are already there.
infra/scripts/apt.sh ffmpeg chromium ||
  stop "ffmpeg and chromium are missing: install them (apt-get install ffmpeg chromium)"

# boto3 for Debian's python3: the tests check that boto3 signs requests local mode accepts.
infra/scripts/apt.sh python3-boto3 ||
  stop "boto3 is missing: install it (apt-get install python3-boto3)"

# The AWS CLI: the demo resumes a function tool with it, the local-API tests and the README
# walkthrough drive it. Debian's awscli (2.9) is installed even when another CLI is on PATH, since
# the walkthrough's test runs the one a reader gets from make deps; it predates AWS_ENDPOINT_URL, so
# the walkthrough passes --endpoint-url.
infra/scripts/apt.sh awscli ||
  stop "the AWS CLI is missing: install it (apt-get install awscli, or https://docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html)"

# jq and curl: the README walkthrough uses both.
infra/scripts/apt.sh jq curl ||
  stop "jq and curl are missing: install them (apt-get install jq curl)"

# cfn-lint checks the synthesized CloudFormation template (infra/cdk). Debian has no package: it
# comes from PyPI, at the version the template was last checked with.
if ! command -v cfn-lint >/dev/null 2>&1; then
  command -v python3 >/dev/null 2>&1 ||
    stop "cfn-lint is missing and so is python3: install Python 3, then: python3 -m pip install cfn-lint==1.51.0"
  echo "installing cfn-lint 1.51.0 from PyPI..."
  if command -v pipx >/dev/null 2>&1; then
    pipx install --quiet 'cfn-lint==1.51.0' >/dev/null 2>&1 || true
  else
    python3 -m pip install --quiet --user --retries 1 --timeout 20 'cfn-lint==1.51.0' >/dev/null 2>&1 || true
  fi
  command -v cfn-lint >/dev/null 2>&1 ||
    stop "cfn-lint is not on PATH and could not be installed there from PyPI: install it (pipx install cfn-lint==1.51.0, or pip install cfn-lint==1.51.0 in a virtualenv) and put it on PATH"
fi

# npm writes node_modules/.package-lock.json on install: reinstall only when the lockfile is newer.
if [ ! -f infra/node_modules/.package-lock.json ] || [ infra/package-lock.json -nt infra/node_modules/.package-lock.json ]; then
  echo "installing npm packages with npm ci (DynamoDB Local, asl-validator, the CDK CLI, the peer engine)..."
  (cd infra && npm ci --no-audit --no-fund --loglevel=error) ||
    stop "npm ci failed in infra/: check that registry.npmjs.org is reachable, then run (cd infra && npm ci)"
fi

# aws-cdk ships Go template files (%name%.template.go) that would break `go vet ./...`: a go.mod
# makes node_modules a module of its own, which ./... of this module leaves out.
[ -f infra/node_modules/go.mod ] || printf 'module sinew.invalid/node_modules\n' > infra/node_modules/go.mod

echo "downloading Go modules (go mod download)..."
go mod download || stop "go mod download failed: check that the Go module proxy (GOPROXY) is reachable"
