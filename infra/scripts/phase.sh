#!/usr/bin/env bash
# phase.sh NAME CMD...: runs CMD, then prints how long the phase took (make test prints every phase's
# time, so a slow cold run shows where its minutes went).
set -uo pipefail
name=$1; shift
start=$(date +%s)
printf '\n==> %s\n' "$name"
"$@"
rc=$?
end=$(date +%s)
if [ $rc -eq 0 ]; then
  printf '==> %s: done in %ss\n' "$name" "$((end - start))"
else
  printf '==> %s: FAILED (exit %s) after %ss\n' "$name" "$rc" "$((end - start))"
fi
exit $rc
