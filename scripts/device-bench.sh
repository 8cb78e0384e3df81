#!/usr/bin/env bash
# Runs Node benchmarks on a machine with no Node, no npm and no network, from a copy of the
# working tree that carries the kit built by scripts/device-kit.sh (.devkit/).
#
#   bash scripts/device-bench.sh                          # the default list below
#   bash scripts/device-bench.sh 'bench/kernel.ts --rounds=3' 'lat:bench/keystroke-latency.ts --counts=2'
#
# Run from anywhere; it works in the repository root. Each argument is one benchmark: a script
# and its flags (split on spaces, run as `node --import tsx ...`), optionally prefixed `name:`;
# the name (default: the script's basename, numbered if repeated) names $OUT/<name>.txt.
# Steps:
#   1. unpacks node to /tmp/devnode/bin/node (first on PATH; used by absolute path throughout) and
#      the pruned node_modules into the repository (node_modules/, agent/node_modules/); a
#      stamp skips this when the same kit is already unpacked; it refuses to replace a
#      node_modules that it did not unpack (DEVKIT_FORCE=1 to do so anyway).
#   2. loads the native addons once (better-sqlite3, DuckDB); if the machine's libstdc++ is too
#      old for them, retries with the kit's (LD_LIBRARY_PATH=/tmp/devnode/lib).
#   3. prints the machine (nproc, node -v, load average ...) to stdout and $OUT/machine.txt, then
#      runs each benchmark with its output tee'd to $OUT/<name>.txt, its elapsed time and exit
#      status after it; a benchmark that fails or runs past BENCH_TIMEOUT seconds (default 300;
#      its process group is killed) does not stop the next. Summary in $OUT/summary.txt; JSON
#      files a benchmark writes to bench/results/ (e.g. keystroke-latency.json) go to $OUT/results/.
#      A benchmark whose top-level code has finished but whose process is still alive
#      BENCH_EXIT_GRACE seconds later (default 20; open handles, e.g. kernel.ts's clients) is
#      ended with process.exit(process.exitCode ?? 0) and a note, instead of waiting for the
#      timeout: benchmarks run through a small loader, /tmp/devnode/run-bench.mjs, that imports
#      the script (process.argv as if it were run directly). BENCH_EXIT_GRACE=0 runs them bare.
# Environment: OUT (default /tmp/out), BENCH_TIMEOUT, BENCH_EXIT_GRACE, DEVKIT_DIR (default <repo>/.devkit),
#   DEVKIT_FORCE. Needs: bash, coreutils (timeout), tar, and xz or python3 (lzma) to unpack.
# Exit status: 0 if every benchmark exited 0, 1 otherwise, 2 if the kit could not be set up.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
KIT=${DEVKIT_DIR:-$ROOT/.devkit}
OUT=${OUT:-/tmp/out}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-300}
BENCH_EXIT_GRACE=${BENCH_EXIT_GRACE:-20}
NODE_HOME=/tmp/devnode
NODE=$NODE_HOME/bin/node
mkdir -p "$OUT"

DEFAULT_BENCHES=(
  'keystroke-latency:bench/keystroke-latency.ts --servers=plexus,hocuspocus-sqlite,bare --counts=2,20 --rounds=1 --keystrokes=100'
  'kernel:bench/kernel.ts --rounds=3'
  'agent-typing:bench/agent-typing.ts --seconds=10 --pause=2'
)

say() { echo "device-bench: $*"; }
die() { echo "device-bench: $*" >&2; exit 2; }

[[ -f $KIT/node.tar.xz && -f $KIT/native.tar.xz && -f $KIT/js.tar.xz && -f $KIT/MANIFEST ]] || die "no kit in $KIT (build it with scripts/device-kit.sh and carry .devkit)"

untar() { # untar ARCHIVE DIR
  if xz --version >/dev/null 2>&1; then
    xz -dc "$1" | tar -x --no-same-owner -C "$2" -f -
  else
    python3 - "$1" "$2" <<'EOF'
import sys, tarfile
with tarfile.open(sys.argv[1], 'r:xz') as t:
    if hasattr(tarfile, 'fully_trusted_filter'):
        t.extractall(sys.argv[2], filter='fully_trusted')  # our own archive; keeps modes as they are
    else:
        t.extractall(sys.argv[2])
EOF
  fi
}

# ---- 1. unpack --------------------------------------------------------------------------------
STAMP=$(sha256sum "$KIT/MANIFEST" | cut -c1-16)
t0=$(date +%s)
if [[ $(cat "$NODE_HOME/.devkit-stamp" 2>/dev/null) != "$STAMP" ]]; then
  rm -rf "$NODE_HOME"
  untar "$KIT/node.tar.xz" /tmp || die "could not unpack node"
  echo "$STAMP" > "$NODE_HOME/.devkit-stamp"
fi
# Others must be able to run node: the kernel runs cells as per-workspace users when root.
chmod 755 "$NODE_HOME" "$NODE_HOME/bin" "$NODE"
read -r -a TOPS <<< "$(sed -n 's/^tops //p' "$KIT/MANIFEST")"
[[ ${#TOPS[@]} -gt 0 ]] || die "MANIFEST lists no folders"
if [[ $(cat node_modules/.devkit-stamp 2>/dev/null) != "$STAMP" ]]; then
  for d in "${TOPS[@]}"; do
    if [[ -e $d && ! -f node_modules/.devkit-stamp && ${DEVKIT_FORCE:-0} != 1 ]]; then
      die "$ROOT/$d exists and was not unpacked from a kit; not replacing it (DEVKIT_FORCE=1 to replace)"
    fi
  done
  for d in "${TOPS[@]}"; do rm -rf "$d"; done
  untar "$KIT/native.tar.xz" "$ROOT" || die "could not unpack native.tar.xz"
  untar "$KIT/js.tar.xz" "$ROOT" || die "could not unpack js.tar.xz"
  echo "$STAMP" > node_modules/.devkit-stamp
fi
say "kit ready in $(( $(date +%s) - t0 )) s ($(sed -n 's/^commit //p' "$KIT/MANIFEST"))"
export PATH="$NODE_HOME/bin:$PATH"
cat > "$NODE_HOME/run-bench.mjs" <<'EOF'
// node --import tsx run-bench.mjs SCRIPT ARGS...: runs SCRIPT as if it were the main module, and
// ends the process BENCH_EXIT_GRACE s after SCRIPT's top-level code finished if it is still alive.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
const script = path.resolve(process.argv[2]);
process.argv.splice(1, 2, script);
await import(pathToFileURL(script).href);
const grace = Number(process.env.BENCH_EXIT_GRACE) * 1000;
setTimeout(() => {
  console.error(`device-bench: ${path.basename(script)} finished its top-level code ${grace / 1000} s ago but is still running (open handles): process.exit(${process.exitCode ?? 0})`);
  process.exit(process.exitCode ?? 0);
}, grace).unref();
EOF

# ---- 2. native addons ---------------------------------------------------------------------------
PRELOAD_CHECK="require('better-sqlite3'); import('@duckdb/node-api').then(async (d) => { const i = await d.DuckDBInstance.create(':memory:'); const c = await i.connect(); await c.run('select 1'); c.closeSync(); i.closeSync(); }).catch((e) => { console.error(String(e)); process.exit(1); })"
if ! check=$("$NODE" -e "$PRELOAD_CHECK" 2>&1); then
  say "native addons do not load with this machine's libraries: $check"
  if check=$(LD_LIBRARY_PATH="$NODE_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$NODE" -e "$PRELOAD_CHECK" 2>&1); then
    export LD_LIBRARY_PATH="$NODE_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    say "using the kit's libstdc++ (LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"
  else
    say "still failing with the kit's libstdc++ (glibc too old?): $check"
    say "continuing: benchmarks that start a Plexus server will fail"
  fi
fi

# ---- 3. machine, then the benchmarks -------------------------------------------------------------
{
  echo "date: $(date -u +%FT%TZ)"
  echo "nproc: $(nproc)"
  echo "node: $("$NODE" -v) ($NODE)"
  echo "loadavg: $(cat /proc/loadavg)"
  echo "uname: $(uname -srm)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "memory: $(awk '/MemTotal|MemAvailable/ {printf "%s %d MiB  ", $1, $2/1024}' /proc/meminfo)"
  echo "glibc: $(getconf GNU_LIBC_VERSION 2>/dev/null || echo '?')"
  echo "user: $(id -un 2>/dev/null || id -u)  repo: $ROOT"
  echo "kit: $(sed -n 's/^commit //p' "$KIT/MANIFEST")"
} | tee "$OUT/machine.txt"

(( $# > 0 )) && BENCHES=("$@") || BENCHES=("${DEFAULT_BENCHES[@]}")
declare -A used=()
summary=()
failed=0
for spec in "${BENCHES[@]}"; do
  name=''
  if [[ $spec =~ ^([A-Za-z0-9_.-]+):(.*)$ ]]; then name=${BASH_REMATCH[1]}; spec=${BASH_REMATCH[2]}; fi
  read -r -a argv <<< "$spec"
  [[ ${#argv[@]} -gt 0 ]] || continue
  [[ -n $name ]] || name=$(basename "${argv[0]}" .ts)
  if [[ -n ${used[$name]:-} ]]; then used[$name]=$(( ${used[$name]} + 1 )); name="$name-${used[$name]}"; else used[$name]=1; fi
  echo
  say "=== $name: node --import tsx ${argv[*]}   (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  s=$(date +%s.%N)
  touch "$OUT/.started"
  if [[ $BENCH_EXIT_GRACE != 0 ]]; then loader=("$NODE_HOME/run-bench.mjs"); else loader=(); fi
  BENCH_EXIT_GRACE=$BENCH_EXIT_GRACE timeout -k 15 "$BENCH_TIMEOUT" "$NODE" --import tsx "${loader[@]}" "${argv[@]}" 2>&1 | tee "$OUT/$name.txt"
  rc=${PIPESTATUS[0]}
  secs=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  case $rc in
    0) status='ok' ;;
    124|137) status="timed out after ${BENCH_TIMEOUT} s (rc $rc)" ;;
    *) status="failed (rc $rc)" ;;
  esac
  (( rc == 0 )) || failed=1
  if [[ -d bench/results ]]; then
    mkdir -p "$OUT/results"
    find bench/results -maxdepth 1 -type f -name '*.json' -size -8M -newer "$OUT/.started" -exec cp {} "$OUT/results/" \;
  fi
  say "=== $name: $status, ${secs} s"
  summary+=("$(printf '%-24s %8s s  %s' "$name" "$secs" "$status")")
done

echo
say "summary (load average now $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '  %s\n' "${summary[@]}" | tee "$OUT/summary.txt"
rm -f "$OUT/.started"
exit $failed
