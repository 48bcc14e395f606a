#!/usr/bin/env bash
# Flame graphs of where the ledger's time goes, sampled with perf (Debian's linux-perf): each as-of query kind,
# warm and with each subject's keys met for the first time, the batched durable append, and
# `permission-ledger import`. Writes one SVG per workload (Tools/flamegraph.py) into --out.
#
#   bash Tools/profile.sh --out docs/flamegraphs/after [--dir WORK] [--query-events N] [--events N] [--queries N]
#
# The queries run on the suite's query ledger in WORK (default: the suite's own), built when missing. perf
# samples this user's processes when kernel.perf_event_paranoid is at most 2 (Debian's default is 3: set it
# with `sysctl kernel.perf_event_paranoid=2`, or run as root). Release builds of the ledger keep frame
# pointers, which is how perf walks the stacks.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out=""
work="${TMPDIR:-/tmp}/ledger-benchmark-suite"
query_events=1000000
events=100000
queries=20000
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out="$2"; shift 2 ;;
        --dir) work="$2"; shift 2 ;;
        --query-events) query_events="$2"; shift 2 ;;
        --events) events="$2"; shift 2 ;;
        --queries) queries="$2"; shift 2 ;;
        *) echo "usage: bash Tools/profile.sh --out DIR [--dir WORK] [--query-events N] [--events N] [--queries N]" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || { echo "profile.sh: --out DIR is required" >&2; exit 2; }
"$root/Tools/setup.sh" libsqlite3-dev time linux-perf
mkdir -p "$out" "$work"
out="$(cd "$out" && pwd)"
bin="$(cd "$root/Tools/Benchmarks" && swift build -c release --product ledger-benchmark >&2 \
    && swift build -c release --product permission-ledger >&2 && swift build -c release --show-bin-path)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"

# Records `perf record -g` of the command after the first three arguments and writes the flame graph
# NAME.svg of the samples under ROOT (a regular expression; "" for all).
graph() {
    local name="$1" title="$2" rootframe="$3"
    shift 3
    perf record -q -g -F 1999 -o "$scratch/perf.data" -- "$@" > "$scratch/$name.txt" 2>&1
    perf script -i "$scratch/perf.data" 2>/dev/null > "$scratch/perf.script"
    python3 "$root/Tools/flamegraph.py" --title "$title ($commit)" ${rootframe:+--root "$rootframe"} \
        "$scratch/perf.script" > "$out/$name.svg"
    echo "$out/$name.svg: $(tail -n 1 "$scratch/$name.txt")" >&2
}

if [ ! -d "$work/query-$query_events/ledger" ]; then
    echo "profile.sh: building the suite's query ledger of $query_events events in $work …" >&2
    "$bin/ledger-benchmark" suite --only queries --events "$events" --query-events "$query_events" --queries 100 \
        --dir "$work" --json "$scratch/suite.json" > /dev/null
fi
for kind in question known-handles is-known-handle permissions; do
    graph "$kind-warm" "$kind, warm: $queries queries on $query_events events" 'Ledger\.read' \
        "$bin/ledger-benchmark" profile --dir "$work" --query-events "$query_events" --kind "$kind" --queries "$queries"
    graph "$kind-first-use" "$kind, the ledger reopened every 500 queries: $queries queries on $query_events events" 'Ledger\.read' \
        "$bin/ledger-benchmark" profile --dir "$work" --query-events "$query_events" --kind "$kind" --queries "$queries" --reopen-every 500
done
graph append "batched durable append: $events events in transactions of 10,000" 'appendSynchronously' \
    "$bin/ledger-benchmark" append --events "$events" --no-replay --dir "$scratch/append"
"$bin/ledger-benchmark" workload --events "$events" > "$scratch/events.jsonl"
mkdir -p "$scratch/imported"
graph import "permission-ledger import of $events events" '' \
    "$bin/permission-ledger" import --ledger "$scratch/imported/ledger" "$scratch/events.jsonl"
