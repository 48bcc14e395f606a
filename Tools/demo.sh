#!/usr/bin/env bash
# The main job on an embedded default: sets up the machine, builds the tool, builds a ledger from the
# bundled family-day fixture (four children, 1,200 events), prints an audit of it and writes each child's
# audit report (LEDGER_DIR-reports/index.html).
#
#   Tools/demo.sh [FIXTURE.jsonl] [LEDGER_DIR]
#
# PERMISSION_LEDGER_TOOL=PATH uses an already built tool instead of building one (the README's test does).
set -euo pipefail
cd "$(dirname "$0")/.."
fixture="${1:-Fixtures/family-day.jsonl}"
ledger="${2:-demo-ledger}"
Tools/setup.sh
tool="${PERMISSION_LEDGER_TOOL:-}"
if [ -z "$tool" ]; then
    swift build -c release --product permission-ledger >&2
    tool=".build/release/permission-ledger"
fi

rm -rf "$ledger"
echo "== importing $fixture into $ledger"
"$tool" import --ledger "$ledger" "$fixture"
echo
echo "== is the log intact?"
"$tool" verify --ledger "$ledger" --format table
echo
echo "== questions by state"
"$tool" questions --ledger "$ledger" --format json |
    python3 -c 'import json,sys,collections; q=json.load(sys.stdin)["questions"]; c=collections.Counter(x["state"] for x in q); print("  ".join(f"{k}: {v}" for k,v in sorted(c.items())), f" (total {len(q)})")'
subjects=$("$tool" questions --ledger "$ledger" --format json | python3 -c 'import json,sys; print("\n".join(sorted({q["subject"] for q in json.load(sys.stdin)["questions"]})))')
for subject in $subjects; do
    echo
    echo "== whom may $subject talk to now, and on whose approval?"
    "$tool" known-handles --ledger "$ledger" --subject "$subject" --format table
    echo
    echo "== $subject's system permissions"
    "$tool" permissions --ledger "$ledger" --subject "$subject" --require camera,microphone --format table
done
echo
echo "== pending questions"
"$tool" questions --ledger "$ledger" --state pending --format table
echo
echo "== digest of all derived state at the head (equal for any ledger holding these events)"
"$tool" digest --ledger "$ledger" --format table
echo
echo "== an audit report of each child, to open in a browser: $ledger-reports/index.html"
rm -rf "$ledger-reports"
"$tool" report --ledger "$ledger" --all --out "$ledger-reports" --format table
