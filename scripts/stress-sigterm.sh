#!/usr/bin/env bash
# SIGTERM under load (not in CI; `npm run stress:sigterm`): runs the replica SIGTERM tests
# ITERATIONS times (default 20) while two busy loops load two cores, and prints one line per run
# and a summary. Every run is bounded (RUN_TIMEOUT seconds), and the busy loops end with the
# script, whatever happens. Needs PostgreSQL (TEST_DATABASE_URL, default the local test one).
#
#   ITERATIONS=5 scripts/stress-sigterm.sh
#
# The tests: a replica SIGTERM'd while events keep coming exits 0 and every acked event is
# answered (replicas-sigterm, replicas, replicas-socket), a SIGTERM during start drains and exits 0
# (start-sigterm), a replica that leaves gives its budget share back (budget-share), and the
# single-process drain (sigterm-drain).
set -u
cd "$(dirname "$0")/.."

ITERATIONS="${ITERATIONS:-20}"
RUN_TIMEOUT="${RUN_TIMEOUT:-300}"
BUSY_LOOPS="${BUSY_LOOPS:-2}"
export TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
LOGS="$(mktemp -d "${TMPDIR:-/tmp}/stress-sigterm.XXXXXX")"
FILES=(
  test/integration/replicas-sigterm.test.ts
  test/integration/replicas.test.ts
  test/integration/replicas-socket.test.ts
  test/resilience/start-sigterm.test.ts
  test/resilience/budget-share.test.ts
  test/resilience/sigterm-drain.test.ts
)
# Only the SIGTERM cases of the files that hold other tests too.
PATTERN='SIGTERM|when one leaves'

busy=()
stop_busy() {
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null; done
  wait "${busy[@]}" 2>/dev/null
}
trap stop_busy EXIT
trap 'exit 130' INT TERM

# Build once, before the load: the tests would otherwise race to build dist/.
npx tsc -p tsconfig.build.json >/dev/null 2>&1 || true

for _ in $(seq 1 "$BUSY_LOOPS"); do
  node -e 'for (;;) {}' &
  busy+=("$!")
done
echo "stress:sigterm: ${ITERATIONS} runs, ${BUSY_LOOPS} busy loops (pids ${busy[*]}), logs in ${LOGS}"

passed=0
failed=0
for i in $(seq 1 "$ITERATIONS"); do
  log="${LOGS}/run-${i}.log"
  start=$(date +%s)
  timeout --kill-after=10 "$RUN_TIMEOUT" npx vitest run "${FILES[@]}" -t "$PATTERN" >"$log" 2>&1
  code=$?
  secs=$(($(date +%s) - start))
  # What the tests print: the drain's SIGTERM-to-exit time and the acked events of the stopping replica.
  figures=$(grep -hoE 'SIGTERM → exit in [0-9]+ ms( \(in the child: [0-9]+ ms\))?|[0-9]+ acked by the stopping replica' "$log" | tr '\n' ';' | sed 's/;$//')
  if [ "$code" -eq 0 ]; then
    passed=$((passed + 1))
    echo "run ${i}: pass in ${secs}s (${figures})"
  else
    failed=$((failed + 1))
    why=$(grep -m3 -E '×|FAIL|timed out' "$log" | sed 's/\x1b\[[0-9;]*m//g' | tr '\n' ' ' | cut -c1-300)
    echo "run ${i}: FAIL (exit ${code}) in ${secs}s: ${why} — see ${log}"
  fi
done
summary="${passed}/${ITERATIONS} passed, ${failed} failed, under ${BUSY_LOOPS} busy loops on $(nproc) cores"
echo "stress:sigterm: ${summary}"
# The result is kept beside the bench's (npm run bench prints the newest one in its SIGTERM line).
mkdir -p bench/results
result="bench/results/$(date -u +%F)-sigterm-stress.json"
SUMMARY="$summary" PASSED="$passed" FAILED="$failed" RUNS="$ITERATIONS" LOOPS="$BUSY_LOOPS" LOGDIR="$LOGS" node -e '
  const fs = require("node:fs");
  const runs = fs.readdirSync(process.env.LOGDIR).filter((f) => f.endsWith(".log")).sort();
  const figures = runs.flatMap((f) => fs.readFileSync(`${process.env.LOGDIR}/${f}`, "utf8").match(/SIGTERM → exit in [0-9]+ ms( \(in the child: [0-9]+ ms\))?/g) ?? []);
  const doc = { date: new Date().toISOString(), runs: Number(process.env.RUNS), passed: Number(process.env.PASSED),
    failed: Number(process.env.FAILED), busyLoops: Number(process.env.LOOPS), summary: process.env.SUMMARY, figures };
  fs.writeFileSync(process.argv[1], JSON.stringify(doc, null, 2) + "\n");
' "$result"
echo "stress:sigterm: written to ${result}"
[ "$failed" -eq 0 ]
