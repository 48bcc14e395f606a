#!/usr/bin/env python3
"""Regenerate the expected results beside the valid fixtures: Fixtures/NAME.expected.

Each expected file is JSON Lines, one check a line:

    {"args":["question","6A3F1C2E-...","--as-of","seq:2"],"output":{...}}

`args` is a permission-ledger command line without `--ledger` and `--format`;
the check runs it with `--ledger L --format json` against a fresh ledger L into
which NAME.jsonl alone was imported, and `output` is the JSON it must print,
compared as JSON values (it is kept exactly as the tool wrote it, so that a
checker without a JSON parser can compare text). The first line is always
`{"args":["digest"],...}`: the digest at the head, which `replay NAME.jsonl
--expect-digest HEX` must also give. An optional `"ignore":[KEY,...]` lists
top-level output keys that depend on the machine rather than on the events
(`stats`' `fileBytes`); they are left out of `output` and not compared.

The files are named NAME.expected, not NAME.expected.jsonl, on purpose: tools and
tests take every Fixtures/*.jsonl for an event fixture (PermissionLedgerTests'
`Fixtures.valid`, `replay Fixtures/*.jsonl`), and an expected file is not one.

The invalid fixtures (Fixtures/invalid/*.jsonl) get a header line

    # error: LINE: MESSAGE

right after their `# line: N` line: the first line `import FILE` writes to
standard error, without the leading `FILE:`. Adding it moves the bad line down
by one, so `# line:` is raised to match; event lines are never touched.

Every query gives --as-of (or history's --to), so no check depends on the wall
clock. Tools/check-fixtures.sh and Tests/EndToEndTests/
FixtureExpectationTests.swift run the checks.

This script runs the real tool and writes what it prints. The expected files pin
behaviour down: review every changed line of `git diff Fixtures/` against the
fixture's header comments and docs/spec/EVENTS.md before committing it; a wrong output is
a bug to fix, not a result to pin.

Usage: python3 Tools/Fixtures/make_expected.py [--tool PATH] [NAME ...]
  --tool PATH  the permission-ledger binary (default: .build/debug/permission-ledger,
               built with `swift build --product permission-ledger`)
  NAME         only these fixtures: a valid one (late-answer) or an invalid one
               (invalid/broken-json); default: every valid fixture of CHECKS and
               every invalid fixture
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The fixtures this writes the expected results of: Fixtures/ at the package root, two folders up.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "Fixtures")

# Keys of an output that depend on the machine, by command.
IGNORED = {"stats": ["fileBytes", "keyFile"]}


def q(file_number, question):
    """The question id of a hand-written fixture (see Fixtures/README.md)."""
    return "6A3F1C2E-%04X-4000-8000-%012d" % (file_number, question)


def fd(n):
    """A family-day question id."""
    return "FAD10000-0000-4000-8000-%012d" % n


# The checks of each fixture, after the head digest (which every file gets first).
CHECKS = {
    "approval-messages": [
        ["digest", "--as-of", "seq:1"],
        ["question", q(1, 1), "--as-of", "seq:1"],
        ["question", q(1, 1), "--as-of", "seq:2"],
        ["known-handles", "--subject", "kid-ava", "--as-of", "seq:1"],
        ["known-handles", "--subject", "kid-ava", "--as-of", "seq:2"],
        ["who-approved", "--handle", "dragonslayer42", "--as-of", "seq:2"],
        ["diff", "--from", "seq:1", "--to", "seq:2"],
    ],
    "decline": [
        ["digest", "--as-of", "seq:4"],
        ["questions", "--subject", "kid-ben", "--as-of", "seq:6"],
        ["known-handles", "--subject", "kid-ben", "--as-of", "seq:2"],
        ["known-handles", "--subject", "kid-ben", "--as-of", "seq:6"],
        ["who-approved", "--handle", "coach.miller@example.org", "--as-of", "seq:6"],
        ["who-approved", "--handle", "mysterygamer77", "--as-of", "seq:6"],
        ["diff", "--from", "seq:4", "--to", "seq:6", "--subject", "kid-ben"],
    ],
    "send-canceled": [
        ["digest", "--as-of", "seq:2"],
        ["question", q(3, 1), "--as-of", "seq:2"],
        # Final: still canceled once its expiresAt (18:00Z) has passed.
        ["question", q(3, 1), "--as-of", "2026-11-20T19:00:00Z"],
        ["known-handles", "--subject", "kid-ava", "--as-of", "seq:2"],
        ["known-handles", "--subject", "kid-ava", "--as-of", "seq:4"],
        ["questions", "--subject", "kid-ava", "--as-of", "seq:4"],
        ["history", "--question", q(3, 1), "--to", "seq:4"],
    ],
    "ask-failed": [
        ["digest", "--as-of", "seq:6"],
        ["question", q(4, 1), "--as-of", "seq:1"],
        ["question", q(4, 3), "--as-of", "seq:12"],
        ["questions", "--subject", "kid-cleo", "--as-of", "seq:12"],
        ["known-handles", "--subject", "kid-cleo", "--as-of", "seq:12"],
        ["diff", "--from", "seq:0", "--to", "seq:12"],
    ],
    "late-answer": [
        ["digest", "--as-of", "seq:4"],
        ["question", q(5, 1), "--as-of", "seq:4"],
        ["question", q(5, 1), "--as-of", "seq:5"],
        ["question", q(5, 2), "--as-of", "2026-11-20T14:45:00Z"],
        ["question", q(5, 2), "--as-of", "seq:7"],
        ["question", q(5, 3), "--as-of", "seq:7"],
        ["known-handles", "--subject", "kid-ben", "--as-of", "seq:7"],
        ["who-approved", "--handle", "sk8rboi", "--as-of", "seq:7"],
    ],
    "expiry-by-clock": [
        ["digest", "--as-of", "seq:3"],
        ["digest", "--as-of", "seq:4"],
        ["questions", "--subject", "kid-ava", "--as-of", "seq:3"],
        ["questions", "--subject", "kid-ava", "--as-of", "seq:4"],
        ["questions", "--subject", "kid-ava", "--as-of", "seq:5"],
        # One microsecond before Q3's expiresAt: still pending.
        ["question", q(6, 3), "--as-of", "2026-11-20T16:45:00.999999Z"],
        ["permissions", "--subject", "kid-ava", "--as-of", "seq:5", "--require", "camera,microphone"],
    ],
    "default-choice": [
        ["digest", "--as-of", "seq:4"],
        ["question", q(7, 1), "--as-of", "seq:6"],
        ["question", q(7, 2), "--as-of", "seq:6"],
        ["question", q(7, 3), "--as-of", "seq:6"],
        ["known-handles", "--subject", "kid-dev", "--as-of", "seq:6"],
        ["who-approved", "--handle", "Tutor@School.example", "--as-of", "seq:6"],
    ],
    "in-person": [
        ["digest", "--as-of", "seq:1"],
        ["question", q(8, 1), "--as-of", "seq:2"],
        # The answer's recordedAt, written with an offset; and one microsecond before it.
        ["known-handles", "--subject", "kid-ava", "--as-of", "2026-11-20T11:20:31.250+01:00"],
        ["known-handles", "--subject", "kid-ava", "--as-of", "2026-11-20T10:20:31.249999Z"],
        ["who-approved", "--handle", "+44 20 7946 0958", "--as-of", "seq:2"],
    ],
    "time-limited": [
        ["digest", "--as-of", "seq:6"],
        ["known-handles", "--subject", "kid-ben", "--as-of", "seq:2"],
        ["known-handles", "--subject", "kid-ben", "--as-of", "seq:6"],
        # The 1 h grant lapses at 11:00:00Z: known just before, not at it.
        ["known-handles", "--subject", "kid-ben", "--as-of", "2026-11-20T10:59:59.999999Z"],
        ["known-handles", "--subject", "kid-ben", "--as-of", "2026-11-20T11:00:00Z"],
        ["question", q(9, 3), "--as-of", "seq:7"],
        ["who-approved", "--handle", "aunt.jo@example.net", "--as-of", "seq:7"],
        ["diff", "--from", "seq:6", "--to", "seq:7"],
    ],
    "several-handles": [
        ["digest", "--as-of", "seq:2"],
        ["question", q(10, 1), "--as-of", "seq:3"],
        ["known-handles", "--subject", "kid-cleo", "--as-of", "seq:2"],
        ["known-handles", "--subject", "kid-cleo", "--as-of", "seq:3"],
        ["history", "--type", "handles.observed", "--to", "seq:3"],
        ["diff", "--from", "seq:2", "--to", "seq:3"],
        ["who-approved", "--handle", "Grandma.Rose@Example.COM", "--as-of", "seq:3"],
    ],
    "significant-update": [
        ["question", q(11, 1), "--as-of", "seq:1"],
        ["question", q(11, 1), "--as-of", "seq:3"],
        ["question", q(11, 2), "--as-of", "seq:3"],
        ["questions", "--subject", "kid-dev", "--as-of", "seq:3"],
        ["known-handles", "--subject", "kid-dev", "--as-of", "seq:3"],
    ],
    "duplicate-response": [
        ["question", q(12, 1), "--as-of", "seq:3"],
        ["known-handles", "--subject", "kid-ava", "--as-of", "seq:3"],
        ["permissions", "--subject", "kid-ava", "--as-of", "seq:3"],
        ["history", "--subject", "kid-ava", "--to", "seq:3"],
        ["stats", "--as-of", "seq:3"],
    ],
    "handles-observed": [
        ["digest", "--as-of", "seq:2"],
        ["question", q(13, 1), "--as-of", "seq:4"],
        ["known-handles", "--subject", "kid-ben", "--as-of", "seq:2"],
        ["known-handles", "--subject", "kid-ben", "--as-of", "seq:4"],
        ["diff", "--from", "seq:2", "--to", "seq:4", "--subject", "kid-ben"],
        ["who-approved", "--handle", "robo_rex", "--as-of", "seq:4"],
        ["who-approved", "--handle", "unknown.caller@example.com", "--as-of", "seq:4"],
    ],
    "permissions": [
        ["digest", "--as-of", "seq:2"],
        ["permissions", "--subject", "kid-ava", "--as-of", "seq:2"],
        ["permissions", "--subject", "kid-ava", "--as-of", "seq:11"],
        ["permissions", "--subject", "kid-ava", "--as-of", "seq:15", "--require", "camera,microphone"],
        ["permissions", "--subject", "kid-ava", "--as-of", "seq:15", "--require", "microphone,notifications,photoLibrary"],
        ["permissions", "--subject", "kid-ben", "--as-of", "seq:15"],
        ["diff", "--from", "seq:9", "--to", "seq:15"],
    ],
    "erasure": [
        ["digest", "--as-of", "seq:7"],
        ["digest", "--as-of", "seq:8"],
        ["question", q(14, 1), "--as-of", "seq:7"],
        ["question", q(14, 1), "--as-of", "seq:12"],
        ["question", q(14, 2), "--as-of", "seq:12"],
        ["question", q(14, 3), "--as-of", "seq:12"],
        ["known-handles", "--subject", "kid-ava", "--as-of", "seq:12"],
        ["known-handles", "--subject", "kid-ben", "--as-of", "seq:11"],
        ["known-handles", "--subject", "kid-ben", "--as-of", "seq:12"],
        ["who-approved", "--handle", "+1 555 010 4455", "--as-of", "seq:12"],
        ["who-approved", "--handle", "tinkerbot", "--as-of", "seq:12"],
        ["history", "--subject", "kid-ava", "--to", "seq:12"],
        ["diff", "--from", "seq:0", "--to", "seq:12", "--subject", "kid-ben"],
        ["stats", "--as-of", "seq:12"],
    ],
    "family-day": [
        ["digest", "--as-of", "seq:600"],
        ["stats", "--as-of", "seq:600"],
        ["stats", "--as-of", "seq:1200"],
        ["known-handles", "--subject", "kid-ava", "--as-of", "seq:1200"],
        ["known-handles", "--subject", "kid-ben", "--as-of", "seq:1200"],
        ["permissions", "--subject", "kid-cleo", "--as-of", "seq:1200"],
        ["questions", "--subject", "kid-dev", "--state", "pending", "--as-of", "seq:1200"],
    ],
}


# Ledgers seal personal fields with secrets of their own, which the chain hashes depend on: the fixtures'
# ledgers draw them from this fixed seed (for tests only), as Tools/check-fixtures.sh and the tests do.
os.environ["PERMISSION_LEDGER_TEST_SEED"] = "permission-ledger fixtures"


def run(tool, args, ledger):
    """The check's output as the tool printed it (one line of JSON), checked to parse."""
    result = subprocess.run([tool] + args + ["--ledger", ledger, "--format", "json"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("permission-ledger %s: exit %d\n%s" % (" ".join(args), result.returncode, result.stderr))
    text = result.stdout.strip()
    if "\n" in text or not isinstance(json.loads(text), dict):
        sys.exit("permission-ledger %s: not one line of a JSON object:\n%s" % (" ".join(args), text))
    return text


def without_key(text, key):
    """The JSON text without a top-level `"key":NUMBER` or `"key":"STRING"` member (what `ignore` lists)."""
    stripped = re.sub(r',"%s":(?:-?[0-9]+|"(?:[^"\\]|\\.)*")(?=[,}])' % re.escape(key), "", text, count=1)
    expected = json.loads(text)
    expected.pop(key, None)
    if json.loads(stripped) != expected:
        sys.exit("cannot leave %s out of %s" % (key, text))
    return stripped


def generate(tool, name, temp):
    ledger = os.path.join(temp, name)
    fixture = os.path.join(HERE, name + ".jsonl")
    result = subprocess.run([tool, "import", "--ledger", ledger, fixture], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("import %s: exit %d\n%s" % (fixture, result.returncode, result.stderr))
    lines = []
    for args in [["digest"]] + CHECKS[name]:
        # The output is kept as the tool wrote it, byte for byte, so that a checker without a JSON
        # parser can compare text (Tools/check-fixtures.sh without python3).
        output = run(tool, args, ledger)
        ignored = IGNORED.get(args[0], [])
        for key in ignored:
            output = without_key(output, key)
        line = '{"args":%s,"output":%s' % (json.dumps(args, ensure_ascii=False, separators=(",", ":")), output)
        if ignored:
            line += ',"ignore":%s' % json.dumps(ignored, separators=(",", ":"))
        lines.append(line + "}")
    path = os.path.join(HERE, name + ".expected")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("%s: %d checks" % (os.path.relpath(path, ROOT), len(lines)))


def refresh_error_header(tool, name, temp):
    """Writes (or rewrites) the `# error:` header of invalid/NAME.jsonl from what the tool says."""
    path = os.path.join(HERE, name + ".jsonl")
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    # Drop an earlier `# error:` line, lowering `# line:` back.
    if any(l.startswith(b"# error:") for l in lines):
        lines = [l for l in lines if not l.startswith(b"# error:")]
        lines = [b"# line: %d" % (int(l[len(b"# line:"):]) - 1) if l.startswith(b"# line:") else l for l in lines]
    at = next((i for i, l in enumerate(lines) if l.startswith(b"# line:")), None)
    if at is None:
        sys.exit("%s has no # line: header" % path)
    bad = int(lines[at][len(b"# line:"):]) + 1
    lines[at] = b"# line: %d" % bad
    lines.insert(at + 1, b"# error: ?")
    with open(path, "wb") as f:
        f.write(b"\n".join(lines))
    ledger = os.path.join(temp, name.replace("/", "-"))
    result = subprocess.run([tool, "import", "--ledger", ledger, path], capture_output=True)
    first = result.stderr.decode("utf-8").split("\n")[0]
    prefix = path + ":"
    if result.returncode != 1 or not first.startswith(prefix):
        sys.exit("import %s: expected exit 1 and a line starting %s, got exit %d\n%s"
                 % (path, prefix, result.returncode, result.stderr.decode("utf-8", "replace")))
    message = first[len(prefix):]
    if not message.startswith("%d:" % bad):
        sys.exit("%s: the error is not about line %d (# line:): %s" % (path, bad, message))
    lines[at + 1] = b"# error: " + message.encode("utf-8")
    with open(path, "wb") as f:
        f.write(b"\n".join(lines))
    print("%s: # error: %s" % (os.path.relpath(path, ROOT), message))


def main():
    argv = sys.argv[1:]
    tool = os.path.join(ROOT, ".build", "debug", "permission-ledger")
    if argv[:1] == ["--tool"]:
        tool, argv = os.path.abspath(argv[1]), argv[2:]
    invalid = sorted("invalid/" + n[:-len(".jsonl")] for n in os.listdir(os.path.join(HERE, "invalid"))
                     if n.endswith(".jsonl"))
    names = argv or sorted(CHECKS) + invalid
    unknown = [n for n in names if n not in CHECKS and n not in invalid]
    if unknown:
        sys.exit("no checks for: %s (add them to CHECKS)" % ", ".join(unknown))
    temp = tempfile.mkdtemp(prefix="make-expected-")
    try:
        for name in names:
            if name in CHECKS:
                generate(tool, name, temp)
            else:
                refresh_error_header(tool, name, temp)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
