#!/usr/bin/env bash
# Where a SendMessage's time goes, by depth: the same build of ferry answering at five depths
# of its request path, then whole, each measured as the side-by-side benchmark measures a
# server (the server on core 0, wrk with 1 thread and 32 connections on core 1, 3 s of
# warm-up, 8 s measured, the server's CPU time per request from /proc):
#
#   scripts/cost-ladder.sh [--rounds N] [--streams] [--keep] [--server NAME='CMD {port}']...
#
#   r1  answers fixed bytes (an echo task's answer) before anything of ferry's runs:
#       hyper and axum alone
#   r2  after the front door and the routing, once the body is read
#   r3  after the JSON-RPC envelope, the strict check and the typed decode
#   r5  r3, then the echo task built as a value (ids, status, history, artifact) and
#       encoded as the answer: what any A2A server must do, without ferry's task core
#   r4  after the task core ran the call (the turn, its events, the store), before the
#       answer is encoded
#   full  the same build, unchanged
#
# With --streams, SendStreamingMessage too, at r5 (the echo's five events built as values
# and framed as SSE, without the task core) and whole, with `ferry bench --mode stream` (32
# connections) as the client on core 1.
#
# The rungs are not in ferry: scripts/cost-ladder.patch adds them to a copy of this tree (a
# git worktree under target/cost-ladder, built with `--profile dist`; the build takes
# minutes), where FERRY_LADDER=N picks one. `--server` adds another server to every round
# (CMD runs under bash; {port} is its port), e.g. the benchmark harness's bare-hyper limit
# or the Rust SDK's echo agent, so that its row is in the same run. Rounds interleave the
# servers; compare rows within one run only. `--keep` leaves the worktree in place (to
# change the rungs: edit them there, then put what `git diff` says there below the first
# lines of scripts/cost-ladder.patch).
# Needs wrk, taskset, curl and python3.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROUNDS=3
STREAMS=0
KEEP=0
PORT=9291
EXTRA_NAMES=()
EXTRA_CMDS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --streams) STREAMS=1; shift ;;
    --keep) KEEP=1; shift ;;
    --server)
      EXTRA_NAMES+=("${2%%=*}")
      EXTRA_CMDS+=("${2#*=}")
      shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--streams] [--keep] [--server NAME='CMD {port}']..." >&2; exit 2 ;;
  esac
done
for tool in wrk taskset curl python3; do
  command -v "$tool" > /dev/null || { echo "cost-ladder: $tool is not installed" >&2; exit 1; }
done

# The build with the rungs, from a worktree of HEAD with the patch applied.
TREE="$ROOT/target/cost-ladder/tree"
BIN="$ROOT/target/cost-ladder/ferry"
rm -rf "$TREE"
git -C "$ROOT" worktree prune
git -C "$ROOT" worktree add --detach --quiet "$TREE" HEAD
cleanup() { [ "$KEEP" = 1 ] || git -C "$ROOT" worktree remove --force "$TREE"; }
trap cleanup EXIT
git -C "$TREE" apply "$ROOT/scripts/cost-ladder.patch"
# A target directory of its own (the first build is a cold one), so that the tree's own
# target/dist/ferry is not replaced by the laddered build; CARGO_TARGET_DIR overrides it.
TARGET="${CARGO_TARGET_DIR:-$ROOT/target/cost-ladder/target}"
(cd "$TREE" && cargo build --profile dist --bin ferry --target-dir "$TARGET")
cp "$TARGET/dist/ferry" "$BIN"

# SendMessage with a new messageId each time; every answer must be a completed task.
LUA="$ROOT/target/cost-ladder/send.lua"
cat > "$LUA" <<'LUA'
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
  n, bad = 0, 0
  run = tostring(os.time()) .. "-" .. tostring(math.random(1, 1e9))
  headers = { ["Content-Type"] = "application/json", ["A2A-Version"] = "1.0" }
end
function request()
  n = n + 1
  return wrk.format("POST", nil, headers, string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":' ..
    '{"messageId":"ladder-%s-%d","role":"ROLE_USER","parts":[{"text":"hi"}]}}}', n, run, n))
end
function response(status, headers, body)
  if status ~= 200 or not body:find("TASK_STATE_COMPLETED", 1, true) then bad = bad + 1 end
end
function done(summary, latency, requests)
  local failed = 0
  for _, t in ipairs(threads) do failed = failed + t:get("bad") end
  local e = summary.errors
  failed = failed + e.connect + e.read + e.write + e.status + e.timeout
  io.write(string.format('LADDER {"requests":%d,"seconds":%.3f,"p50_ms":%.3f,"p99_ms":%.3f,"errors":%d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, failed))
end
LUA
NAMES=("${EXTRA_NAMES[@]}" r1 r2 r3 r5 r4 full)
command_of() {
  local name="$1" i
  for i in "${!EXTRA_NAMES[@]}"; do
    if [ "${EXTRA_NAMES[$i]}" = "$name" ]; then echo "${EXTRA_CMDS[$i]//\{port\}/$PORT}"; return; fi
  done
  case "$name" in
    full) echo "exec '$BIN' serve --agent echo --bind 127.0.0.1:$PORT" ;;
    r*) echo "FERRY_LADDER=${name#r} exec '$BIN' serve --agent echo --bind 127.0.0.1:$PORT" ;;
  esac
}

TICKS=$(getconf CLK_TCK)
# Starts server NAME on core 0 and waits for its card; sets PID.
start() {
  setsid taskset -c 0 bash -c "$(command_of "$1")" > /dev/null 2>&1 &
  PID=$!
  for _ in $(seq 100); do
    if curl -s -o /dev/null "http://127.0.0.1:$PORT/.well-known/agent-card.json"; then return; fi
    sleep 0.1
  done
  echo "cost-ladder: $1 did not start" >&2
  kill -- -"$PID" 2> /dev/null
  exit 1
}
stop() {
  kill -- -"$PID" 2> /dev/null || true
  wait "$PID" 2> /dev/null || true
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }

# One line of a table: the client's JSON (the Lua script's LADDER line, or `ferry bench
# --json`) and the server's CPU ticks before and after the measurement.
report() {
  python3 - "$@" "$TICKS" <<'PY'
import json, sys
rnd, name, out, before, after, ticks = sys.argv[1:]
m = json.loads(out)
done = m["requests"] if "requests" in m else m["completed"]
rate = done / m["seconds"] if "seconds" in m else m["perSecond"]
p50, p99 = m.get("p50_ms", m.get("p50Ms")), m.get("p99_ms", m.get("p99Ms"))
cpu = (int(after) - int(before)) / int(ticks) / max(done, 1) * 1e6
note = f"  ({m['errors']} errors)" if m["errors"] else ""
print(f"{rnd:>5} {name:<9} {rate:>10,.0f}  {p50:6.2f}  {p99:6.2f}  {cpu:8.1f} µs{note}", flush=True)
PY
}
HEADER="round name           per s  p50 ms  p99 ms  server CPU each"

echo "SendMessage (p50 and p99: the request)"
echo "$HEADER"
for round in $(seq "$ROUNDS"); do
  for name in "${NAMES[@]}"; do
    start "$name"
    taskset -c 1 wrk -t1 -c32 -d3s -s "$LUA" "http://127.0.0.1:$PORT/" > /dev/null
    before=$(cpu_ticks)
    out=$(taskset -c 1 wrk -t1 -c32 -d8s -s "$LUA" "http://127.0.0.1:$PORT/" | grep '^LADDER ')
    after=$(cpu_ticks)
    stop
    report "$round" "$name" "${out#LADDER }" "$before" "$after"
  done
done

[ "$STREAMS" = 1 ] || exit 0
bench() {
  taskset -c 1 "$BIN" bench --url "http://127.0.0.1:$PORT/" --mode stream --connections 32 \
    --duration "$1" --json
}
echo "SendStreamingMessage (p50 and p99: the whole stream)"
echo "$HEADER"
for round in $(seq "$ROUNDS"); do
  for name in "${EXTRA_NAMES[@]}" r5 full; do
    start "$name"
    bench 3 > /dev/null
    before=$(cpu_ticks)
    out=$(bench 8)
    after=$(cpu_ticks)
    stop
    report "$round" "$name" "$out" "$before" "$after"
  done
done
