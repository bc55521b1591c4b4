#!/usr/bin/env bash
# build.sh [GOARCH]: builds every function under functions/ as dist/<name>/bootstrap for Lambda's
# provided.al2023 runtime: linux, CGO off, no RPC (lambda.norpc), trimmed and stripped. GOARCH is
# arm64 by default (what is deployed); pass amd64 for the host's Runtime Interface Emulator.
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=${1:-arm64}
for dir in functions/*/; do
  f=$(basename "$dir")
  mkdir -p "dist/$arch/$f"
  GOOS=linux GOARCH=$arch CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w' \
    -o "dist/$arch/$f/bootstrap" "./functions/$f"
  printf '  dist/%s/%s/bootstrap %s\n' "$arch" "$f" "$(du -h "dist/$arch/$f/bootstrap" | cut -f1)"
done
