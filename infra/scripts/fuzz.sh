#!/usr/bin/env bash
# fuzz.sh: runs every Go fuzz target of the module for FUZZTIME each (default 30s), one at a time,
# printing each target's time and a summary; exits non-zero when any target finds a crasher (Go
# writes it under the package's testdata/fuzz/<Target>/, where it stays as a seed once fixed).
#
#   infra/scripts/fuzz.sh                      # every target, 30s each
#   FUZZTIME=60s infra/scripts/fuzz.sh         # what `make fuzz` runs
#   FUZZTIME=10s infra/scripts/fuzz.sh ./internal/tool ./internal/apicall   # only these packages
#
# Targets are found with `go test -list '^Fuzz'` in each package whose tests declare one, so a new
# target is included without editing this file. FUZZPARALLEL sets go test -parallel (the number of
# fuzzing workers; default: go's, GOMAXPROCS). Some targets need DynamoDB Local: when
# SINEW_TEST_DYNAMODB_ENDPOINT is unset the script runs itself under one shared instance
# (SINEW_FUZZ_NO_DDB=1 skips that, for runs of packages that need none).
set -uo pipefail
cd "$(dirname "$0")/../.."

FUZZTIME=${FUZZTIME:-30s}
FUZZPARALLEL=${FUZZPARALLEL:-}

if [ -z "${SINEW_TEST_DYNAMODB_ENDPOINT:-}" ] && [ -z "${SINEW_FUZZ_NO_DDB:-}" ]; then
  exec go run ./internal/testenv/ddblocal/cmd/ddblocal -- "$0" "$@"
fi

# Packages whose test files declare a fuzz target (a cheap filter: go test -list compiles a
# package's tests, and most packages have none), or the packages given as arguments.
if [ $# -gt 0 ]; then
  pkgs=("$@")
else
  mapfile -t pkgs < <(grep -rl --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' . \
    | grep -v -e '/node_modules/' -e '^./infra/cdk/' | xargs -r -n1 dirname | sort -u)
fi

targets=()
for pkg in "${pkgs[@]}"; do
  if ! list=$(go test -list '^Fuzz' "$pkg" 2>&1); then
    printf 'fuzz.sh: cannot list the fuzz targets of %s:\n%s\n' "$pkg" "$list" >&2
    exit 2
  fi
  while read -r name; do
    [[ $name == Fuzz* ]] && targets+=("$pkg $name")
  done <<<"$list"
done
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz.sh: no fuzz targets found" >&2
  exit 2
fi

printf 'fuzz.sh: %d targets, %s each\n' "${#targets[@]}" "$FUZZTIME"
par=()
[ -n "$FUZZPARALLEL" ] && par=(-parallel "$FUZZPARALLEL")
summary=()
failed=0
total_start=$(date +%s)
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  printf '\n==> %s %s\n' "$pkg" "$name"
  start=$(date +%s)
  out=$(mktemp)
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "${par[@]}" "$pkg" 2>&1 | tee "$out" \
    | grep -v -e '^fuzz: elapsed' -e ' level=INFO ' -e ' INFO ' -e ' WARN '
  rc=${PIPESTATUS[0]}
  secs=$(( $(date +%s) - start ))
  execs=$(grep -o 'execs: [0-9]*' "$out" | tail -1 | cut -d' ' -f2)
  if [ "$rc" -eq 0 ]; then
    status=ok
  else
    status=FAIL
    failed=$((failed + 1))
    crasher=$(grep -o 'testdata/fuzz/[^ ]*' "$out" | tail -1)
    [ -n "$crasher" ] && status="FAIL crasher ${pkg#./}/$crasher"
  fi
  rm -f "$out"
  summary+=("$(printf '%-40s %-24s %5ss %12s execs  %s' "${pkg#./}" "$name" "$secs" "${execs:-?}" "$status")")
  printf '==> %s %s: %s in %ss\n' "$pkg" "$name" "$status" "$secs"
done

printf '\nfuzz.sh summary (FUZZTIME=%s, %ss in all):\n' "$FUZZTIME" "$(( $(date +%s) - total_start ))"
printf '%s\n' "${summary[@]}"
if [ "$failed" -gt 0 ]; then
  printf 'fuzz.sh: %d of %d targets failed\n' "$failed" "${#targets[@]}"
  exit 1
fi
printf 'fuzz.sh: all %d targets passed\n' "${#targets[@]}"
