#!/usr/bin/env bash
# Load and shutdown check of the example server (Tools/ExampleServer): its throughput under wrk at 64
# connections beside the library's own group-commit figure, then SIGTERM in the middle of a load, again and
# again: the server must exit 0, every append it acknowledged must be in the ledger, the ledger must verify,
# and nothing but what was sent may appear in it.
#
#   Tools/server-load.sh                         # wrk 15 s, ledger-benchmark group-commit, 20 SIGTERM runs
#   Tools/server-load.sh --sigterm-runs 3        # fewer SIGTERM runs
#   Tools/server-load.sh --group-commit 9000     # compare with this events/s figure instead of running ledger-benchmark
#   Tools/server-load.sh --skip-group-commit     # no comparison
#   Tools/server-load.sh --wrk-duration 30s      # a longer wrk run; --skip-wrk for none
#   Tools/server-load.sh --keep                  # keep the ledgers and logs (their folder is printed)
#
# Installs wrk with Tools/setup.sh, builds the example package in release mode (and, for the comparison,
# Tools/Benchmarks), and prints a summary table. Exits 1 when any check fails. Not a test: the figures
# depend on the machine.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
package="$root/Tools/ExampleServer"
runs=20
group_commit=""
skip_group_commit=0
skip_wrk=0
wrk_duration=15s
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --sigterm-runs) runs="$2"; shift 2 ;;
        --group-commit) group_commit="$2"; shift 2 ;;
        --skip-group-commit) skip_group_commit=1; shift ;;
        --wrk-duration) wrk_duration="$2"; shift 2 ;;
        --skip-wrk) skip_wrk=1; shift ;;
        --keep) keep=1; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "server-load: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

"$root/Tools/setup.sh" wrk
echo "== building the example server (release)" >&2
(cd "$package" && swift build -c release --product ledger-server >&2 && swift build -c release --product ledger-load >&2)
bin="$(cd "$package" && swift build -c release --show-bin-path)"

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
work="$(mktemp -d "${TMPDIR:-/tmp}/server-load.XXXXXX")"
server_pid=""
load_pid=""
cleanup() {
    [ -n "$load_pid" ] && kill -KILL "$load_pid" 2>/dev/null || true
    [ -n "$server_pid" ] && kill -KILL "$server_pid" 2>/dev/null || true
    if [ "$keep" = 1 ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
failures=0

# start_server LEDGER PREFIX: starts ledger-server on a free port with its output in PREFIX.out and
# PREFIX.err; sets server_pid, and url once it prints `listening on URL`.
start_server() {
    "$bin/ledger-server" --ledger "$1" --port 0 >"$2.out" 2>"$2.err" &
    server_pid=$!
    for _ in $(seq 1 1200); do
        if grep -q '^listening on ' "$2.out" 2>/dev/null; then
            url="$(sed -n 's/^listening on //p' "$2.out" | head -n 1)"
            return 0
        fi
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "server-load: ledger-server exited before listening:" >&2
            cat "$2.err" >&2
            return 1
        fi
        sleep 0.05
    done
    echo "server-load: ledger-server did not listen within 60 s" >&2
    return 1
}

# wait_for PID SECONDS: waits for a child of this shell to exit and sets waited to its exit status; kills
# it after SECONDS (waited=timeout). Not in a $(...): only this shell can wait for its children.
wait_for() {
    local pid="$1" limit=$(( $2 * 20 ))
    waited=0
    for _ in $(seq 1 "$limit"); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        waited=timeout
        return
    fi
    wait "$pid" || waited=$?
}

# field NAME LINE: the value of NAME=VALUE in a line of key=value pairs.
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1; }

# --- wrk ------------------------------------------------------------------------------------------------
wrk_rps="–"; wrk_p99="–"; wrk_events="–"; wrk_non2xx=0
if [ "$skip_wrk" = 0 ]; then
    echo "== wrk -t2 -c64 -d$wrk_duration against a fresh ledger" >&2
    start_server "$work/wrk.ledger" "$work/wrk-server"
    wrk -t2 -c64 -d"$wrk_duration" --latency -s "$package/load/post-question.lua" "$url" | tee "$work/wrk.txt" >&2
    summary="$(grep '^wrk-summary:' "$work/wrk.txt")"
    wrk_rps="$(field rps "$summary")"
    wrk_p99="$(awk -v us="$(field p99_us "$summary")" 'BEGIN { printf "%.2f", us / 1000 }')"
    wrk_non2xx="$(field non2xx "$summary")"
    kill -TERM "$server_pid"
    wait_for "$server_pid" 60
    status="$waited"
    server_pid=""
    check="$("$bin/ledger-server" check --ledger "$work/wrk.ledger" | tail -n 1)" || true
    wrk_events="$(echo "$check" | sed -n 's/.*events=\([0-9]*\).*/\1/p')"
    if [ "$status" != 0 ] || [ "$wrk_non2xx" != 0 ] || ! echo "$check" | grep -q '^check: ok'; then
        echo "server-load: FAILED after wrk: server exit $status, $wrk_non2xx non-2xx responses, $check" >&2
        failures=$((failures + 1))
    fi
fi

# --- the library's group-commit figure ------------------------------------------------------------------
gc_rps="–"; gc_p99="–"
if [ -n "$group_commit" ]; then
    gc_rps="$group_commit"
elif [ "$skip_group_commit" = 0 ]; then
    echo "== ledger-benchmark group-commit (64 tasks), built in Tools/Benchmarks" >&2
    (cd "$root/Tools/Benchmarks" && swift build -c release --product ledger-benchmark >&2)
    benchmark_bin="$(cd "$root/Tools/Benchmarks" && swift build -c release --show-bin-path)"
    "$benchmark_bin/ledger-benchmark" group-commit --tasks 64 --rounds 1 --dir "$work/group-commit" --json "$work/group-commit.json" >&2
    gc_rps="$(python3 -c 'import json,sys; print("%.0f" % json.load(open(sys.argv[1]))["groupCommit"]["eventsPerSecond"])' "$work/group-commit.json")"
    gc_p99="$(python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["groupCommit"]["p99Ms"])' "$work/group-commit.json")"
fi

# --- SIGTERM in the middle of a load ----------------------------------------------------------------------
echo "== $runs SIGTERM runs: ledger-load with 64 connections, SIGTERM to the server after 0.5-2 s" >&2
rows=()
passed=0
for run in $(seq 1 "$runs"); do
    dir="$work/run-$run"
    mkdir -p "$dir"
    start_server "$dir/ledger" "$dir/server"
    port="${url##*:}"
    "$bin/ledger-load" --port "$port" --connections 64 --duration 60 \
        --acknowledged "$dir/acknowledged.txt" --sent "$dir/sent.txt" >"$dir/load.txt" 2>&1 &
    load_pid=$!
    delay="$(awk -v seed="$RANDOM" 'BEGIN { srand(seed); printf "%.2f", 0.5 + rand() * 1.5 }')"
    sleep "$delay"
    kill -TERM "$server_pid"
    wait_for "$server_pid" 60
    server_status="$waited"
    server_pid=""
    wait_for "$load_pid" 60
    load_status="$waited"
    load_pid=""
    check_status=0
    "$bin/ledger-server" check --ledger "$dir/ledger" --acknowledged "$dir/acknowledged.txt" --sent "$dir/sent.txt" \
        >"$dir/check.txt" 2>&1 || check_status=$?
    acknowledged="$(wc -l <"$dir/acknowledged.txt" | tr -d ' ')"
    sent="$(wc -l <"$dir/sent.txt" | tr -d ' ')"
    events="$(sed -n 's/.*events=\([0-9]*\).*/\1/p' "$dir/check.txt")"
    verdict="ok"
    if [ "$server_status" != 0 ] || [ "$load_status" != 0 ] || [ "$check_status" != 0 ]; then
        verdict="FAILED"
        failures=$((failures + 1))
        echo "server-load: run $run FAILED: server exit $server_status, ledger-load exit $load_status, check exit $check_status" >&2
        cat "$dir/check.txt" "$dir/server.err" >&2 || true
    else
        passed=$((passed + 1))
    fi
    rows+=("| $run | $delay | $server_status | $acknowledged | ${events:-?} | $sent | $verdict |")
    echo "run $run: SIGTERM after ${delay}s, server exit $server_status, $acknowledged acknowledged, ${events:-?} in the ledger, $sent sent: $verdict" >&2
done

echo
echo "## SIGTERM runs"
echo
echo "| run | SIGTERM after (s) | server exit | acknowledged | in the ledger | sent | check |"
echo "|---:|---:|---:|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
echo
echo "## Summary"
echo
echo "| what | figure |"
echo "|---|---|"
echo "| wrk, 64 connections, $wrk_duration: POST /events, one event each | $wrk_rps requests/s, p99 $wrk_p99 ms, $wrk_non2xx non-2xx, $wrk_events events stored |"
echo "| ledger-benchmark group-commit, 64 tasks: Ledger.append of one event each | $gc_rps events/s, p99 $gc_p99 ms |"
if [[ "$wrk_rps" =~ ^[0-9]+$ ]] && [[ "$gc_rps" =~ ^[0-9]+$ ]] && [ "$gc_rps" -gt 0 ]; then
    echo "| the server's throughput against the library's | $(awk -v a="$wrk_rps" -v b="$gc_rps" 'BEGIN { printf "%.0f%%", 100 * a / b }') |"
fi
echo "| SIGTERM runs passed | $passed/$runs |"
echo "| load average (1, 5, 15 min) before / after: other work on the machine skews the figures | $load_before / $(cut -d' ' -f1-3 /proc/loadavg) |"
if [ "$failures" -gt 0 ]; then
    echo
    echo "server-load: $failures check(s) FAILED"
    exit 1
fi
