#!/usr/bin/env bash
# The whole suite under CPU stress, N times in a row (issue: no flaky tests; docs/performance.md §13):
# clones the current commit into a fresh directory, installs with `npm ci`, then runs `npm test`
# with `stress-ng --cpu 2` on both cores beside it, and appends one line per run to the results
# file. Needs stress-ng (Debian: apt-get install stress-ng).
#
#   bash scripts/stress-suite.sh [runs=10] [results=/tmp/stress-results.txt]
#
# PLEXUS_STRESS_FOLLOW=1 pulls the source checkout's newest commit before each run (and runs
# `npm ci` again when the lockfile changed), so a loop left running while work goes on tests
# each revision as it lands; every line names the revision it ran.
#
# PLEXUS_STRESS_CPUS (default 2) is how many stress-ng CPU workers each run starts. Two loops can
# run side by side, each a full suite under stress: start one `stress-ng --cpu 2` yourself and
# the loops with PLEXUS_STRESS_CPUS=0, so every run has both cores loaded and another suite beside it.
set -uo pipefail
runs=${1:-10}
results=${2:-/tmp/stress-results.txt}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/plexus-stress-XXXXXX)
# mktemp makes the folder 0700: sandboxed cells run as other users and must reach the checkout.
chmod 755 "$work"
command -v stress-ng >/dev/null || { echo "stress-ng is missing (apt-get install stress-ng)" >&2; exit 2; }
git clone -q "$repo" "$work/repo" && cd "$work/repo" || exit 2
export CI=true
npm ci --no-audit --no-fund > "$work/npm-ci.log" 2>&1 || { echo "npm ci failed (see $work/npm-ci.log)" >> "$results"; exit 1; }
echo "commit $(git log --oneline -1)" >> "$results"
for i in $(seq 1 "$runs"); do
  if [ "${PLEXUS_STRESS_FOLLOW:-0}" = 1 ]; then
    before=$(git rev-parse HEAD:package-lock.json)
    git pull -q --ff-only "$repo" HEAD || { echo "run $i: git pull failed" >> "$results"; exit 1; }
    if [ "$(git rev-parse HEAD:package-lock.json)" != "$before" ]; then
      npm ci --no-audit --no-fund > "$work/npm-ci.log" 2>&1 || { echo "run $i: npm ci failed (see $work/npm-ci.log)" >> "$results"; exit 1; }
    fi
  fi
  sp=
  if [ "${PLEXUS_STRESS_CPUS:-2}" -gt 0 ]; then
    stress-ng --cpu "${PLEXUS_STRESS_CPUS:-2}" --timeout 0 > /dev/null 2>&1 &
    sp=$!
  fi
  start=$(date +%s)
  npm test > "$work/run-$i.log" 2>&1
  rc=$?
  # Keep each run's per-test timings (the next run overwrites them).
  cp .tmp/vitest.json "$work/vitest-$i.json" 2>/dev/null; cp e2e/results.json "$work/e2e-$i.json" 2>/dev/null
  if [ -n "$sp" ]; then kill "$sp"; wait "$sp" 2>/dev/null; fi
  echo "run $i: $(git log --oneline -1 --format=%h) rc=$rc $(tail -1 "$work/run-$i.log") $(( $(date +%s) - start ))s load=$(cut -d' ' -f1-3 /proc/loadavg) at $(date +%H:%M) (log: $work/run-$i.log)" >> "$results"
done
echo DONE >> "$results"
