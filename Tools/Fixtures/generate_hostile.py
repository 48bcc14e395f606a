#!/usr/bin/env python3
"""Generate Fixtures/hostile/: the hostile-input corpus.

Writes, next to this script:

- base.jsonl: valid events that put a ledger in a known state (questions that
  are pending, approved, denied, canceled, failed and expired by an event, a
  question of another subject, a permission and an observation). The test
  imports it first; every case is then imported into a copy of that ledger.
- GROUP.cases, one file per group of cases: for each case a `# case: KIND`
  line, `# expect: TEXT` lines (text the first error line must contain),
  `# about: ...` lines, then the case's context (valid event lines that go
  before the bad line in the same imported file, usually none) and, last, the
  bad line itself. Blank lines and comment lines are not part of a case.

Each bad line must be rejected (exit 1, `FILE:LINE:`, nothing written). The
bad lines are bytes, not text: invalid UTF-8 and NUL bytes are real bytes in
the files, so the .cases files are binary in places.

Usage: python3 Tools/Fixtures/generate_hostile.py          writes the files
       python3 Tools/Fixtures/generate_hostile.py --check  exits 1 if a committed file differs
Same script, same output, byte for byte: nothing depends on the clock, on
randomness or on hash order.
"""
import copy
import json
import os
import sys

# The corpus this writes: Fixtures/hostile/ at the package root, two folders up.
HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "Fixtures", "hostile")

OCC = "2026-11-20T11:00:00Z"
REC = "2026-11-20T11:00:01Z"
DEL = object()  # a value that removes a field


def Q(n):
    """A question id of the base ledger (1 to 8) or of a case (0x100 and up)."""
    return "6A3F1C2E-DEAD-4000-8000-%012X" % n


def J(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# ---------------------------------------------------------------- the base ledger

def base_events():
    events = []

    def add(event_type, subject="kid-ava", **fields):
        n = len(events) + 1
        event = {"type": event_type, "id": "hostile-base-%02d" % n, "subject": subject,
                 "occurredAt": "2026-11-20T08:%02d:00Z" % n, "recordedAt": "2026-11-20T08:%02d:01Z" % n}
        event.update(fields)
        events.append(event)

    def person(value, kind):
        return {"handle": {"value": value, "kind": kind}}

    def communication(*people):
        return {"communication": {"people": list(people), "actions": ["message"]}}

    add("question.asked", question={
        "id": Q(1), "topic": communication(person("orbit", "custom")),
        "choices": [{"id": "approve-1h", "title": "Approve for one hour", "answer": "approval", "grantSeconds": 3600},
                    {"id": "approve", "title": "Approve", "answer": "approval"},
                    {"id": "decline", "title": "Decline", "answer": "denial"}],
        "defaultChoice": "decline", "expiresAt": "2026-11-20T12:00:00Z"})
    add("question.asked", question={"id": Q(2), "topic": communication(person("comet", "custom"))})
    add("question.answered", questionId=Q(2), choiceId="approve")
    add("question.asked", question={"id": Q(3), "topic": communication(person("mom@example.com", "emailAddress"))})
    add("question.answered", questionId=Q(3), choiceId="decline")
    add("question.asked", question={"id": Q(4), "topic": communication(person("+1 555 010 0004", "phoneNumber"))})
    add("question.sendCanceled", questionId=Q(4))
    add("question.asked", question={"id": Q(5), "topic": communication(person("nova", "custom"))})
    add("question.askFailed", questionId=Q(5), error={"code": "notAvailable"})
    add("question.asked", question={"id": Q(6), "topic": communication(person("luna", "custom")),
                                    "expiresAt": "2026-11-20T10:00:00Z"})
    add("question.expired", questionId=Q(6))
    add("question.asked", question={"id": Q(7), "topic": {"significantAppUpdate": {"description": "Version 2 adds chat"}}})
    add("question.asked", subject="kid-ben", question={"id": Q(8), "topic": communication(person("pixel", "custom"))})
    add("permission.changed", permission="camera", state="authorized", cause="systemPrompt")
    add("handles.observed", checked=[{"value": "orbit", "kind": "custom"}, {"value": "dad@example.com", "kind": "emailAddress"}],
        known=[{"value": "dad@example.com", "kind": "emailAddress"}])
    return events


BASE = base_events()
HEAD_SEQ = len(BASE)
HEAD_RECORDED = BASE[-1]["recordedAt"]
PERM_BASE = next(e for e in BASE if e["type"] == "permission.changed")

# ---------------------------------------------------------------- templates: valid against the base ledger

def perm(id):
    return {"type": "permission.changed", "id": id, "subject": "kid-ava", "occurredAt": OCC, "recordedAt": REC,
            "permission": "microphone", "state": "denied", "cause": "settings"}


_next_question = [0x100]


def new_question_id():
    _next_question[0] += 1
    return Q(_next_question[0])


def ask(id):
    return {"type": "question.asked", "id": id, "subject": "kid-ava", "occurredAt": OCC, "recordedAt": REC,
            "question": {
                "id": new_question_id(),
                "topic": {"communication": {
                    "people": [{"handle": {"value": "+1 555 010 0099", "kind": "phoneNumber"},
                                "name": {"givenName": "Sam", "familyName": "Lee"}}],
                    "actions": ["message", "audioCall"]}},
                "choices": [{"id": "approve-1h", "title": "Approve for one hour", "answer": "approval", "grantSeconds": 3600},
                            {"id": "approve", "title": "Approve", "answer": "approval"},
                            {"id": "decline", "title": "Decline", "answer": "denial"}],
                "defaultChoice": "decline",
                "expiresAt": "2026-11-21T11:00:00Z"}}


def update(id):
    return {"type": "question.asked", "id": id, "subject": "kid-ava", "occurredAt": OCC, "recordedAt": REC,
            "question": {"id": new_question_id(),
                         "topic": {"significantAppUpdate": {"description": "Version 3 adds video calls"}}}}


def answer(id, question=1, choice="approve"):
    return {"type": "question.answered", "id": id, "subject": "kid-ava", "occurredAt": OCC, "recordedAt": REC,
            "questionId": Q(question), "choiceId": choice, "via": "messages"}


def follow_up(event_type, id, question=1):
    return {"type": event_type, "id": id, "subject": "kid-ava", "occurredAt": OCC, "recordedAt": REC,
            "questionId": Q(question)}


def fail(id, question=1):
    event = follow_up("question.askFailed", id, question)
    event["error"] = {"code": "systemError", "message": "underlying error"}
    return event


def observed(id):
    return {"type": "handles.observed", "id": id, "subject": "kid-ava", "occurredAt": OCC, "recordedAt": REC,
            "checked": [{"value": "orbit", "kind": "custom"}, {"value": "+1 555 010 0004", "kind": "phoneNumber"}],
            "known": [{"value": "orbit", "kind": "custom"}]}


def erased(id):
    return {"type": "subject.erased", "id": id, "subject": "kid-ava", "occurredAt": OCC, "recordedAt": REC,
            "erasure": {"basis": "guardianRequest", "reference": "case-4711"}}


def at(event, path, value):
    """A copy of `event` with the field at `path` (dot-separated; numbers index arrays) set, or removed with DEL."""
    event = copy.deepcopy(event)
    keys = [int(k) if k.isdigit() else k for k in path.split(".")]
    parent = event
    for key in keys[:-1]:
        parent = parent[key]
    if value is DEL:
        del parent[keys[-1]]
    else:
        parent[keys[-1]] = value
    return event


def sub(line, old, new):
    """`line` with the first `old` replaced by `new` (bytes); `old` must occur."""
    assert old in line, (old, line)
    return line.replace(old, new, 1)


# ---------------------------------------------------------------- the cases

CASES = []  # (kind, expects, about, context lines, bad line)


def case(kind, bad, expect, about, context=()):
    if isinstance(bad, dict):
        bad = J(bad)
    if isinstance(expect, str):
        expect = [expect]
    context = [J(c) if isinstance(c, dict) else c for c in context]
    CASES.append((kind, expect, about, context, bad))


def eid(kind):
    return "hx-" + kind


def perm_for(kind):
    return perm(eid(kind))


SYNTAX = "invalid JSON"


def syntax_cases():
    g = "syntax/"

    def k(name, bad, about, expect=SYNTAX):
        case(g + name, bad, expect, about)

    line = lambda name: J(perm_for(g + name))
    k("truncated-object", line("truncated-object")[:-1], "the closing brace is missing")
    k("truncated-mid-string", line("truncated-mid-string")[:40], "the line ends inside a string")
    k("truncated-mid-key", line("truncated-mid-key")[:36], "the line ends inside a field name")
    k("truncated-after-colon", sub(line("truncated-after-colon"), b',"cause":"settings"}', b',"cause":'), "the line ends after a colon")
    k("truncated-after-comma", sub(line("truncated-after-comma"), b',"cause":"settings"}', b','), "the line ends after a comma")
    k("truncated-mid-number", sub(line("truncated-mid-number"), b',"cause":"settings"}', b',"seq":1'), "the line ends inside a number")
    k("truncated-mid-literal", sub(line("truncated-mid-literal"), b',"cause":"settings"}', b',"seq":nu'), "the line ends inside null")
    k("lone-open-brace", b"{", "only an opening brace")
    k("lone-open-bracket", b"[", "only an opening bracket")
    k("lone-quote", b'"', "only a quote")
    k("lone-close-brace", b"}", "only a closing brace")
    k("trailing-garbage-word", line("trailing-garbage-word") + b" x", "text after the object")
    k("two-objects", line("two-objects") + line("two-objects-b"), "two objects on one line")
    k("trailing-comma-after-object", line("trailing-comma-after-object") + b",", "a comma after the object")
    k("trailing-close-bracket", line("trailing-close-bracket") + b"]", "a stray ] after the object")
    k("trailing-line-comment", line("trailing-line-comment") + b" // note", "a // comment after the object")
    k("trailing-comma-in-object", sub(line("trailing-comma-in-object"), b'"settings"}', b'"settings",}'), "a comma before }")
    k("trailing-comma-in-array", J(at(ask(eid(g + "trailing-comma-in-array")), "question.topic.communication.actions", ["message"])).replace(b'["message"]', b'["message",]', 1), "a comma before ] in actions")
    k("leading-comma-in-object", sub(line("leading-comma-in-object"), b'{"type"', b'{,"type"'), "a comma right after {")
    k("double-comma", sub(line("double-comma"), b',"state"', b',,"state"'), "two commas in a row")
    k("empty-array-comma", J(at(ask(eid(g + "empty-array-comma")), "question.topic.communication.actions", [])).replace(b'"actions":[]', b'"actions":[,]', 1), "[,] as actions")
    k("missing-comma-between-fields", sub(line("missing-comma-between-fields"), b',"state"', b' "state"'), "no comma between two fields")
    k("missing-comma-in-array", J(ask(eid(g + "missing-comma-in-array"))).replace(b'"message","audioCall"', b'"message" "audioCall"', 1), "no comma between two array items")
    k("missing-colon", sub(line("missing-colon"), b'"state":', b'"state" '), "no colon after a field name")
    k("missing-value", sub(line("missing-value"), b'"state":"denied"', b'"state":'), "a field with no value before the comma")
    k("missing-key", sub(line("missing-key"), b',"state"', b',:"x","state"'), "a colon with no field name")
    k("single-quoted-key", sub(line("single-quoted-key"), b'"state"', b"'state'"), "a field name in single quotes")
    k("single-quoted-value", sub(line("single-quoted-value"), b'"denied"', b"'denied'"), "a string value in single quotes")
    k("unquoted-key", sub(line("unquoted-key"), b'"state":', b"state:"), "a field name without quotes")
    k("unquoted-value", sub(line("unquoted-value"), b'"denied"', b"denied"), "a string value without quotes")
    k("block-comment", sub(line("block-comment"), b',"state"', b',/* state */"state"'), "a /* */ comment between fields")
    k("line-comment-inside", sub(line("line-comment-inside"), b',"cause":"settings"}', b', // cause\n')[:-1], "a // comment inside the object")
    k("hash-comment-inside", sub(line("hash-comment-inside"), b',"state"', b', # note\t"state"'), "a # comment inside the object")
    k("nan", sub(line("nan"), b'"settings"}', b'"settings","seq":NaN}'), "NaN as a number")
    k("infinity", sub(line("infinity"), b'"settings"}', b'"settings","seq":Infinity}'), "Infinity as a number")
    k("minus-infinity", sub(line("minus-infinity"), b'"settings"}', b'"settings","seq":-Infinity}'), "-Infinity as a number")
    k("leading-zero", sub(line("leading-zero"), b'"settings"}', b'"settings","seq":016}'), "a number with a leading zero")
    k("negative-leading-zero", sub(line("negative-leading-zero"), b'"settings"}', b'"settings","seq":-016}'), "a negative number with a leading zero")
    k("leading-plus", sub(line("leading-plus"), b'"settings"}', b'"settings","seq":+16}'), "a number with a leading +")
    k("leading-dot", sub(line("leading-dot"), b'"settings"}', b'"settings","seq":.5}'), "a number starting with .")
    k("trailing-dot", sub(line("trailing-dot"), b'"settings"}', b'"settings","seq":16.}'), "a number ending with .")
    k("hex-number", sub(line("hex-number"), b'"settings"}', b'"settings","seq":0x10}'), "a hexadecimal number")
    k("empty-exponent", sub(line("empty-exponent"), b'"settings"}', b'"settings","seq":1e}'), "an exponent with no digits")
    k("signed-empty-exponent", sub(line("signed-empty-exponent"), b'"settings"}', b'"settings","seq":1e+}'), "an exponent with a sign and no digits")
    k("double-minus", sub(line("double-minus"), b'"settings"}', b'"settings","seq":--1}'), "two minus signs")
    k("lone-minus", sub(line("lone-minus"), b'"settings"}', b'"settings","seq":-}'), "a minus sign alone")
    k("digit-separator", sub(line("digit-separator"), b'"settings"}', b'"settings","seq":1_000}'), "an underscore in a number")
    k("capitalized-true", sub(line("capitalized-true"), b'"settings"}', b'"settings","seq":True}'), "True instead of true")
    k("truncated-null", sub(line("truncated-null"), b'"settings"}', b'"settings","seq":nul}'), "nul instead of null")
    k("overlong-null", sub(line("overlong-null"), b'"settings"}', b'"settings","seq":nulll}'), "nulll instead of null")
    k("undefined", sub(line("undefined"), b'"settings"}', b'"settings","seq":undefined}'), "undefined, which JSON does not have")
    k("escape-x", sub(line("escape-x"), b'"kid-ava"', b'"kid-\\x41va"'), "the \\x escape, which JSON does not have")
    k("escape-a", sub(line("escape-a"), b'"kid-ava"', b'"kid-\\ava"'), "the \\a escape")
    k("escape-single-quote", sub(line("escape-single-quote"), b'"kid-ava"', b'"kid-\\\'ava"'), "the \\' escape")
    k("escape-zero", sub(line("escape-zero"), b'"kid-ava"', b'"kid-\\0ava"'), "the \\0 escape")
    k("escape-capital-u", sub(line("escape-capital-u"), b'"kid-ava"', b'"kid-\\U0041va"'), "\\U instead of \\u")
    k("escape-short-u", sub(line("escape-short-u"), b'"kid-ava"', b'"kid-\\u41"'), "\\u with two hex digits")
    k("escape-non-hex-u", sub(line("escape-non-hex-u"), b'"kid-ava"', b'"kid-\\u00G1va"'), "\\u with a non-hex digit")
    k("escape-braced-u", sub(line("escape-braced-u"), b'"kid-ava"', b'"kid-\\u{41}va"'), "\\u{41}, Swift's form")
    k("backslash-at-end", sub(line("backslash-at-end"), b',"cause":"settings"}', b',"cause":"settings\\'), "a backslash as the last byte of the line")
    k("lone-high-surrogate", sub(line("lone-high-surrogate"), b'"kid-ava"', b'"kid-\\ud800ava"'), "a lone high surrogate \\ud800")
    k("lone-low-surrogate", sub(line("lone-low-surrogate"), b'"kid-ava"', b'"kid-\\udc00ava"'), "a lone low surrogate \\udc00")
    k("high-surrogate-then-letter", sub(line("high-surrogate-then-letter"), b'"kid-ava"', b'"kid-\\ud83d\\u0041"'), "a high surrogate followed by \\u0041")
    k("two-high-surrogates", sub(line("two-high-surrogates"), b'"kid-ava"', b'"kid-\\ud83d\\ud83d"'), "two high surrogates")
    k("reversed-surrogate-pair", sub(line("reversed-surrogate-pair"), b'"kid-ava"', b'"kid-\\ude00\\ud83d"'), "a surrogate pair in the wrong order")
    k("high-surrogate-at-string-end", sub(line("high-surrogate-at-string-end"), b'"kid-ava"', b'"kid-ava\\ud83d"'), "a high surrogate as a string's last character")
    k("raw-tab-in-string", sub(line("raw-tab-in-string"), b'"kid-ava"', b'"kid\tava"'), "a raw tab inside a string")
    k("raw-carriage-return-in-string", sub(line("raw-carriage-return-in-string"), b'"kid-ava"', b'"kid\rava"'), "a raw CR inside a string (mid-line)")
    k("raw-escape-char-in-string", sub(line("raw-escape-char-in-string"), b'"kid-ava"', b'"kid\x1b[31mava"'), "a raw ESC (a terminal colour code) inside a string")
    k("raw-unit-separator-in-string", sub(line("raw-unit-separator-in-string"), b'"kid-ava"', b'"kid\x1fava"'), "a raw 0x1F inside a string")
    k("raw-control-in-key", sub(line("raw-control-in-key"), b'"state"', b'"st\x01ate"'), "a raw 0x01 inside a field name")
    k("array-top-level", b"[" + line("array-top-level") + b"]", "the event wrapped in an array", expect="expected a JSON object")
    k("string-top-level", b'"permission.changed"', "a string instead of an object", expect="expected a JSON object")
    k("number-top-level", b"42", "a number instead of an object", expect="expected a JSON object")
    k("null-top-level", b"null", "null instead of an object", expect="expected a JSON object")
    k("true-top-level", b"true", "true instead of an object", expect="expected a JSON object")
    k("empty-object", b"{}", "an empty object", expect="type: is required but missing")
    k("nesting-33-levels", sub(line("nesting-33-levels"), b'"settings"}', b'"settings","extra":' + b"[" * 32 + b"]" * 32 + b"}"), "33 levels of nesting, one more than the reader takes")
    k("unclosed-nested-array", sub(line("unclosed-nested-array"), b'"settings"}', b'"settings","extra":[[1,2]}'), "an inner array that is not closed")
    k("mismatched-brackets", sub(line("mismatched-brackets"), b'"settings"}', b'"settings","extra":[1}]}'), "] and } swapped")


def bytes_cases():
    g = "bytes/"
    line = lambda name: J(perm_for(g + name))

    def in_subject(name, raw, about, expect="not valid UTF-8"):
        case(g + name, sub(line(name), b'"kid-ava"', b'"kid-' + raw + b'ava"'), expect, about)

    in_subject("utf8-ff", b"\xff", "byte 0xFF, never valid in UTF-8")
    in_subject("utf8-fe", b"\xfe", "byte 0xFE, never valid in UTF-8")
    in_subject("utf8-lone-continuation", b"\x80", "a continuation byte with no lead byte")
    in_subject("utf8-overlong-slash-2", b"\xc0\xaf", "'/' encoded in 2 bytes (overlong)")
    in_subject("utf8-overlong-nul-2", b"\xc0\x80", "NUL encoded in 2 bytes (modified UTF-8, overlong)")
    in_subject("utf8-overlong-3", b"\xe0\x80\xaf", "'/' encoded in 3 bytes (overlong)")
    in_subject("utf8-overlong-4", b"\xf0\x80\x80\xaf", "'/' encoded in 4 bytes (overlong)")
    in_subject("utf8-truncated-2", b"\xc3", "a 2-byte sequence cut after its lead byte")
    in_subject("utf8-truncated-3", b"\xe2\x82", "a 3-byte sequence (the euro sign) cut after 2 bytes")
    in_subject("utf8-truncated-4", b"\xf0\x9f\x98", "a 4-byte sequence (an emoji) cut after 3 bytes")
    in_subject("utf8-encoded-surrogate", b"\xed\xa0\x80", "U+D800 encoded as UTF-8 (CESU-8)")
    in_subject("utf8-beyond-10ffff", b"\xf4\x90\x80\x80", "U+110000, beyond Unicode")
    in_subject("utf8-f5-lead", b"\xf5\x80\x80\x80", "lead byte 0xF5, never valid")
    in_subject("utf8-latin1", b"caf\xe9", "Latin-1 text (caf\\xE9), not UTF-8")
    in_subject("utf8-continuation-missing-mid", b"\xe2\x28\xa1", "a 3-byte sequence whose second byte is not a continuation byte")
    case(g + "utf8-invalid-in-key", sub(line("utf8-invalid-in-key"), b'"state"', b'"st\xffate"'), "not valid UTF-8", "byte 0xFF inside a field name")
    case(g + "utf8-invalid-in-enum", sub(line("utf8-invalid-in-enum"), b'"denied"', b'"deni\xe9d"'), "not valid UTF-8", "Latin-1 inside an enumeration value")
    case(g + "utf8-invalid-outside-string", sub(line("utf8-invalid-outside-string"), b',"state"', b',\xff"state"'), SYNTAX, "byte 0xFF between fields")
    case(g + "utf8-bom-at-line-start", b"\xef\xbb\xbf" + line("utf8-bom-at-line-start"), SYNTAX, "a UTF-8 byte order mark before the object")
    case(g + "utf16le-line", line("utf16le-line").decode("utf-8").encode("utf-16-le"), SYNTAX, "the event encoded as UTF-16LE (every other byte NUL)")
    case(g + "nbsp-between-fields", sub(line("nbsp-between-fields"), b',"state"', b',\xc2\xa0"state"'), SYNTAX, "a no-break space (U+00A0) where JSON allows only ASCII white space")
    case(g + "line-separator-between-fields", sub(line("line-separator-between-fields"), b',"state"', b',\xe2\x80\xa8"state"'), SYNTAX, "U+2028 LINE SEPARATOR between fields")
    case(g + "vertical-tab-between-fields", sub(line("vertical-tab-between-fields"), b',"state"', b',\x0b"state"'), SYNTAX, "a vertical tab, not JSON white space")
    case(g + "form-feed-between-fields", sub(line("form-feed-between-fields"), b',"state"', b',\x0c"state"'), SYNTAX, "a form feed, not JSON white space")
    case(g + "nul-in-string", sub(line("nul-in-string"), b'"kid-ava"', b'"kid-\x00ava"'), "NUL byte", "a raw NUL byte inside a string")
    case(g + "nul-in-key", sub(line("nul-in-key"), b'"state"', b'"st\x00ate"'), "NUL byte", "a raw NUL byte inside a field name")
    case(g + "nul-between-fields", sub(line("nul-between-fields"), b',"state"', b',\x00"state"'), "NUL byte", "a raw NUL byte between fields")
    case(g + "nul-at-line-start", b"\x00" + line("nul-at-line-start"), "NUL byte", "a NUL byte before the object")
    case(g + "nul-after-object", line("nul-after-object") + b"\x00", SYNTAX, "a NUL byte after the object")
    case(g + "nul-only", b"\x00" * 16, "NUL byte", "a line of 16 NUL bytes")
    case(g + "nul-escaped-in-id", at(perm_for(g + "nul-escaped-in-id"), "id", "hx-nul\u0000id"), "id: holds U+0000 (a control character); identifiers may not hold control, format or separator characters", "\\u0000 in the event id")
    case(g + "nul-escaped-in-subject", at(perm_for(g + "nul-escaped-in-subject"), "subject", "kid-\u0000ava"), "subject: holds U+0000 (a control character)", "\\u0000 in the subject")
    case(g + "nul-escaped-in-type", at(perm_for(g + "nul-escaped-in-type"), "type", "permission.changed\u0000"), "type:", "\\u0000 at the end of the type, which then is unknown")
    case(g + "nul-escaped-in-custom-handle", at(observed(eid(g + "nul-escaped-in-custom-handle")), "checked.0.value", "orb\u0000it"), "checked[0].value: holds U+0000 (a control character)", "\\u0000 in a custom handle")
    case(g + "del-raw-in-subject", sub(line("del-raw-in-subject"), b'"kid-ava"', b'"kid-\x7fava"'), "subject: holds U+007F (a control character)", "a raw DEL (0x7F) in the subject: valid JSON, but a control character")
    case(g + "c1-control-in-id", at(perm_for(g + "c1-control-in-id"), "id", "hx-c1\u0085id"), "id: holds U+0085 (a control character)", "U+0085 (NEL, a C1 control) in the event id")
    case(g + "escaped-newline-in-subject", at(perm_for(g + "escaped-newline-in-subject"), "subject", "kid-\nava"), "subject: holds U+000A (a control character)", "\\n in the subject")
    case(g + "escaped-tab-in-id", at(perm_for(g + "escaped-tab-in-id"), "id", "hx-tab\tid"), "id: holds U+0009 (a control character)", "\\t in the event id")


def types_cases():
    g = "types/"

    def k(name, template, path, value, expect, about):
        kind = g + name
        case(kind, at(template(eid(kind)), path, value), expect, about)

    P, A, U, N, O = perm, ask, update, answer, observed
    F = fail
    C = lambda id: follow_up("question.sendCanceled", id)
    k("type-number", P, "type", 7, "type: expected a string, got a number", "type is a number")
    k("type-array", P, "type", ["permission.changed"], "type: expected a string, got an array", "type is an array")
    k("type-object", P, "type", {"name": "permission.changed"}, "type: expected a string, got an object", "type is an object")
    k("type-bool", P, "type", True, "type: expected a string, got a boolean", "type is a boolean")
    k("id-number", P, "id", 42, "id: expected a string, got a number", "id is a number")
    k("id-array", P, "id", ["hx"], "id: expected a string, got an array", "id is an array")
    k("id-bool", P, "id", False, "id: expected a string, got a boolean", "id is a boolean")
    k("subject-number", P, "subject", 1, "subject: expected a string, got a number", "subject is a number")
    k("subject-object", P, "subject", {"name": "kid-ava"}, "subject: expected a string, got an object", "subject is an object")
    k("occurred-at-number", P, "occurredAt", 1795172400, "occurredAt: expected a string, got a number", "occurredAt as Unix seconds")
    k("occurred-at-array", P, "occurredAt", [2026, 11, 20], "occurredAt: expected a string, got an array", "occurredAt as an array")
    k("recorded-at-number", P, "recordedAt", 1795172401000, "recordedAt: expected a string, got a number", "recordedAt as Unix milliseconds")
    k("recorded-at-bool", P, "recordedAt", True, "recordedAt: expected a string, got a boolean", "recordedAt is a boolean")
    k("seq-string", P, "seq", str(HEAD_SEQ + 1), "seq: expected a whole number, got a string", "seq as a string")
    k("seq-bool", P, "seq", True, "seq: expected a whole number, got a boolean", "seq is a boolean")
    k("seq-array", P, "seq", [HEAD_SEQ + 1], "seq: expected a whole number, got an array", "seq is an array")
    k("hash-number", P, "hash", 0, "hash: expected a string, got a number", "hash is a number")
    k("hash-array", P, "hash", ["0" * 64], "hash: expected a string, got an array", "hash is an array")
    k("question-string", A, "question", "6A3F1C2E-DEAD-4000-8000-000000000999", "question: expected an object, got a string", "question is a string")
    k("question-array", A, "question", [], "question: expected an object, got an array", "question is an array")
    k("question-id-number", A, "question.id", 12345, "question.id: expected a string, got a number", "question.id is a number")
    k("topic-string", A, "question.topic", "communication", "question.topic: expected an object, got a string", "topic is a string")
    k("topic-array", A, "question.topic", [], "question.topic: expected an object, got an array", "topic is an array")
    k("communication-array", A, "question.topic.communication", [], "question.topic.communication: expected an object, got an array", "communication is an array")
    k("people-object", A, "question.topic.communication.people", {"handle": {"value": "orbit", "kind": "custom"}}, "question.topic.communication.people: expected an array, got an object", "people is one object, not an array")
    k("people-string", A, "question.topic.communication.people", "orbit", "question.topic.communication.people: expected an array, got a string", "people is a string")
    k("person-string", A, "question.topic.communication.people.0", "orbit", "question.topic.communication.people[0]: expected an object, got a string", "a person is a string")
    k("handle-string", A, "question.topic.communication.people.0.handle", "+1 555 010 0099", "question.topic.communication.people[0].handle: expected an object, got a string", "a handle is a bare string")
    k("handle-value-number", A, "question.topic.communication.people.0.handle.value", 15550100099, "question.topic.communication.people[0].handle.value: expected a string, got a number", "a phone number as a JSON number")
    k("handle-kind-array", A, "question.topic.communication.people.0.handle.kind", ["phoneNumber"], "people[0].handle.kind: expected a string, got an array", "a handle's kind is an array")
    k("name-string", A, "question.topic.communication.people.0.name", "Sam Lee", "people[0].name: expected an object, got a string", "a name is a string")
    k("given-name-number", A, "question.topic.communication.people.0.name.givenName", 7, "people[0].name.givenName: expected a string, got a number", "givenName is a number")
    k("actions-string", A, "question.topic.communication.actions", "message", "communication.actions: expected an array, got a string", "actions is a string")
    k("actions-object", A, "question.topic.communication.actions", {"message": True}, "communication.actions: expected an array, got an object", "actions is an object")
    k("action-number", A, "question.topic.communication.actions.0", 0, "communication.actions[0]: expected a string, got a number", "an action is a number")
    k("action-null", A, "question.topic.communication.actions.1", None, "communication.actions[1]: expected a string, got null", "an action is null")
    k("update-string", U, "question.topic.significantAppUpdate", "Version 3", "significantAppUpdate: expected an object, got a string", "significantAppUpdate is a string")
    k("description-number", U, "question.topic.significantAppUpdate.description", 3, "significantAppUpdate.description: expected a string, got a number", "the update's description is a number")
    k("choices-object", A, "question.choices", {"id": "approve"}, "question.choices: expected an array, got an object", "choices is an object")
    k("choices-string", A, "question.choices", "approve,decline", "question.choices: expected an array, got a string", "choices is a string")
    k("choice-string", A, "question.choices.1", "approve", "question.choices[1]: expected an object, got a string", "a choice is a string")
    k("choice-id-number", A, "question.choices.1.id", 2, "question.choices[1].id: expected a string, got a number", "a choice's id is a number")
    k("choice-title-bool", A, "question.choices.1.title", True, "question.choices[1].title: expected a string, got a boolean", "a choice's title is a boolean")
    k("choice-answer-bool", A, "question.choices.1.answer", True, "question.choices[1].answer: expected a string, got a boolean", "a choice's answer is a boolean")
    k("grant-seconds-string", A, "question.choices.0.grantSeconds", "3600", "question.choices[0].grantSeconds: expected a whole number, got a string", "grantSeconds as a string")
    k("grant-seconds-bool", A, "question.choices.0.grantSeconds", True, "question.choices[0].grantSeconds: expected a whole number, got a boolean", "grantSeconds is a boolean")
    k("default-choice-number", A, "question.defaultChoice", 2, "question.defaultChoice: expected a string, got a number", "defaultChoice is a number (an index)")
    k("default-choice-object", A, "question.defaultChoice", {"id": "decline"}, "question.defaultChoice: expected a string, got an object", "defaultChoice is a choice object")
    k("expires-at-number", A, "question.expiresAt", 86400, "question.expiresAt: expected a string, got a number", "expiresAt as a number of seconds")
    k("question-id-ref-number", N, "questionId", 1, "questionId: expected a string, got a number", "questionId is a number")
    k("question-id-ref-object", C, "questionId", {"id": Q(1)}, "questionId: expected a string, got an object", "questionId is an object")
    k("choice-id-ref-number", N, "choiceId", 1, "choiceId: expected a string, got a number", "choiceId is a number")
    k("choice-id-ref-array", N, "choiceId", ["approve"], "choiceId: expected a string, got an array", "choiceId is an array")
    k("via-number", N, "via", 0, "via: expected a string, got a number", "via is a number")
    k("via-bool", N, "via", True, "via: expected a string, got a boolean", "via is a boolean")
    k("error-string", F, "error", "systemError", "error: expected an object, got a string", "error is a string")
    k("error-code-number", F, "error.code", 4, "error.code: expected a string, got a number", "error.code is a number")
    k("error-message-object", F, "error.message", {"text": "boom"}, "error.message: expected a string, got an object", "error.message is an object")
    k("checked-object", O, "checked", {"value": "orbit", "kind": "custom"}, "checked: expected an array, got an object", "checked is one handle, not an array")
    k("checked-item-string", O, "checked.0", "orbit", "checked[0]: expected an object, got a string", "a checked handle is a string")
    k("known-string", O, "known", "orbit", "known: expected an array, got a string", "known is a string")
    k("known-item-number", O, "known.0", 1, "known[0]: expected an object, got a number", "a known handle is a number")
    k("permission-number", P, "permission", 1, "permission: expected a string, got a number", "permission is a number")
    k("state-bool", P, "state", False, "state: expected a string, got a boolean", "state is a boolean")
    k("cause-array", P, "cause", ["settings"], "cause: expected a string, got an array", "cause is an array")


def numbers_cases():
    g = "numbers/"

    def seq(name, literal, expect, about):
        kind = g + name
        case(kind, sub(J(perm_for(kind)), b'"settings"}', b'"settings","seq":' + literal + b"}"), expect, about)

    def grant(name, literal, expect, about):
        kind = g + name
        case(kind, J(ask(eid(kind))).replace(b'"grantSeconds":3600', b'"grantSeconds":' + literal, 1),
             expect, about)

    seq("seq-1e999", b"1e999", "seq: must be a whole number", "seq 1e999, beyond every float")
    seq("seq-minus-1e999", b"-1e999", "seq: must be a whole number", "seq -1e999")
    seq("seq-2-pow-64", b"18446744073709551616", "seq: 18446744073709551616 is out of range", "seq 2^64, one past UInt64")
    seq("seq-2-pow-63", b"9223372036854775808", "seq: 9223372036854775808 is out of range", "seq 2^63, one past Int64")
    seq("seq-int64-max", b"9223372036854775807", "seq 9223372036854775807 does not match", "seq Int64.max: parses, but is not the next position")
    seq("seq-1000-digits", b"9" * 1000, "seq:", "seq of 1000 digits")
    seq("seq-negative", b"-1", "seq: must be 1 or more", "seq -1, negative where only positions count")
    seq("seq-int64-min", b"-9223372036854775808", "seq: must be 1 or more", "seq Int64.min")
    seq("seq-zero", b"0", "seq: must be 1 or more", "seq 0: positions start at 1")
    seq("seq-negative-zero", b"-0", "seq: must be 1 or more", "seq -0")
    seq("seq-fraction", str(HEAD_SEQ + 1).encode() + b".5", "seq: must be a whole number", "seq with a fraction")
    seq("seq-point-zero", str(HEAD_SEQ + 1).encode() + b".0", "seq: must be a whole number", "seq 16.0: integer fields take integer literals only")
    seq("seq-exponent", b"1.6e1", "seq: must be a whole number", "seq 1.6e1 (16 written with an exponent)")
    seq("seq-tiny", b"1e-999", "seq: must be a whole number", "seq 1e-999, underflows to zero")
    grant("grant-seconds-1e999", b"1e999", "grantSeconds: must be a whole number", "grantSeconds 1e999")
    grant("grant-seconds-2-pow-63", b"9223372036854775808", "grantSeconds: 9223372036854775808 is out of range", "grantSeconds 2^63")
    grant("grant-seconds-2-pow-64", b"18446744073709551616", "grantSeconds: 18446744073709551616 is out of range", "grantSeconds 2^64")
    grant("grant-seconds-minus-2-pow-63", b"-9223372036854775808", "grantSeconds: must be a positive number", "grantSeconds Int64.min")
    grant("grant-seconds-minus-2-pow-64", b"-18446744073709551616", "grantSeconds: -18446744073709551616 is out of range", "grantSeconds -2^64")
    grant("grant-seconds-fraction", b"0.5", "grantSeconds: must be a whole number", "grantSeconds 0.5")
    grant("grant-seconds-point-zero", b"3600.0", "grantSeconds: must be a whole number", "grantSeconds 3600.0")
    grant("grant-seconds-exponent", b"36e2", "grantSeconds: must be a whole number", "grantSeconds 36e2")
    grant("grant-seconds-negative-zero", b"-0", "grantSeconds: must be a positive number", "grantSeconds -0")
    grant("grant-seconds-negative-one", b"-1", "grantSeconds: must be a positive number", "grantSeconds -1")
    grant("grant-seconds-400-digits", b"1" * 400, "grantSeconds:", "grantSeconds of 400 digits")


def fields_cases():
    g = "fields/"

    def unknown(name, template, path, key, expect, about):
        kind = g + name
        event = template(eid(kind))
        target = event
        if path:
            for part in path.split("."):
                target = target[int(part) if part.isdigit() else part]
        target[key] = "x"
        case(kind, event, [expect, "unknown field"], about)

    def missing(name, template, path, expect, about):
        kind = g + name
        case(kind, at(template(eid(kind)), path, DEL), [expect, "is required but missing"], about)

    unknown("unknown-top-level", perm, "", "responder", "responder", "an unknown field at the top level")
    unknown("unknown-top-level-case", perm, "", "Subject", "Subject", "Subject with a capital S")
    unknown("unknown-payload-of-other-type", perm, "", "questionId", "questionId", "questionId on permission.changed: a field of another event type")
    unknown("unknown-question-on-answer", answer, "", "question", "question", "question on question.answered")
    unknown("unknown-choice-on-ask", ask, "", "choiceId", "choiceId", "choiceId on question.asked")
    unknown("unknown-in-question", ask, "question", "title", "question.title", "an unknown field in question")
    unknown("unknown-in-topic", ask, "question.topic", "video", "question.topic.video", "an unknown topic kind")
    unknown("unknown-in-communication", ask, "question.topic.communication", "groups", "question.topic.communication.groups", "an unknown field in communication")
    unknown("unknown-in-person", ask, "question.topic.communication.people.0", "photo", "people[0].photo", "an unknown field in a person")
    unknown("unknown-in-handle", ask, "question.topic.communication.people.0.handle", "label", "people[0].handle.label", "an unknown field in a handle")
    unknown("unknown-in-name", ask, "question.topic.communication.people.0.name", "firstName", "people[0].name.firstName", "firstName instead of givenName")
    unknown("unknown-in-update", update, "question.topic.significantAppUpdate", "version", "significantAppUpdate.version", "an unknown field in significantAppUpdate")
    unknown("unknown-in-choice", ask, "question.choices.2", "color", "question.choices[2].color", "an unknown field in a choice")
    unknown("unknown-in-error", fail, "error", "domain", "error.domain", "an unknown field in error")
    unknown("unknown-in-checked-handle", observed, "checked.1", "verified", "checked[1].verified", "an unknown field in a checked handle")
    unknown("unknown-in-known-handle", observed, "known.0", "since", "known[0].since", "an unknown field in a known handle")
    unknown("unknown-empty-name", perm, "", "", "unknown field", "a field whose name is empty")
    unknown("unknown-escaped-newline-name", perm, "", "state\nx", "unknown field", "a field name holding an escaped newline")
    unknown("unknown-escaped-escape-name", perm, "", "\u001b[2J", "unknown field", "a field name holding a terminal escape sequence")
    unknown("unknown-nul-name", perm, "", "\u0000", "unknown field", "a field name that is \\u0000")
    unknown("unknown-long-name", perm, "", "x" * 5000, "unknown field", "a field name of 5000 bytes")
    missing("missing-type", perm, "type", "type", "no type")
    missing("missing-id", perm, "id", "id", "no id")
    missing("missing-subject", perm, "subject", "subject", "no subject")
    missing("missing-occurred-at", perm, "occurredAt", "occurredAt", "no occurredAt")
    missing("missing-question", ask, "question", "question", "question.asked without question")
    missing("missing-question-id", ask, "question.id", "question.id", "a question without id")
    missing("missing-topic", ask, "question.topic", "question.topic", "a question without topic")
    missing("missing-people", ask, "question.topic.communication.people", "people", "communication without people")
    missing("missing-handle", ask, "question.topic.communication.people.0.handle", "people[0].handle", "a person without handle")
    missing("missing-handle-value", ask, "question.topic.communication.people.0.handle.value", "handle.value", "a handle without value")
    missing("missing-handle-kind", ask, "question.topic.communication.people.0.handle.kind", "handle.kind", "a handle without kind")
    missing("missing-description", update, "question.topic.significantAppUpdate.description", "description", "an update without description")
    missing("missing-choice-id", ask, "question.choices.1.id", "choices[1].id", "a choice without id")
    missing("missing-choice-title", ask, "question.choices.1.title", "choices[1].title", "a choice without title")
    missing("missing-choice-answer", ask, "question.choices.1.answer", "choices[1].answer", "a choice without answer")
    missing("missing-question-id-ref", lambda id: follow_up("question.expired", id), "questionId", "questionId", "question.expired without questionId")
    missing("missing-choice-id-ref", answer, "choiceId", "choiceId", "question.answered without choiceId")
    missing("missing-error", fail, "error", "error", "question.askFailed without error")
    missing("missing-error-code", fail, "error.code", "error.code", "an error without code")
    missing("missing-checked", observed, "checked", "checked", "handles.observed without checked")
    missing("missing-known", observed, "known", "known", "handles.observed without known")
    missing("missing-permission", perm, "permission", "permission", "permission.changed without permission")
    missing("missing-state", perm, "state", "state", "permission.changed without state")
    case(g + "null-type", at(perm_for(g + "null-type"), "type", None), "type: is required but missing", "type is null")
    case(g + "null-subject", at(perm_for(g + "null-subject"), "subject", None), "subject: is required but missing", "subject is null (a required field may not be null)")
    case(g + "null-question", at(ask(eid(g + "null-question")), "question", None), "question: is required but missing", "question is null")
    case(g + "null-handle-kind", at(observed(eid(g + "null-handle-kind")), "checked.0.kind", None), "checked[0].kind: is required but missing", "a handle's kind is null")

    def duplicate(name, line, about):
        case(g + name, line, ["invalid JSON", "appears twice"], about)

    line = lambda name: J(perm_for(g + name))
    duplicate("duplicate-id", sub(line("duplicate-id"), b',"subject"', b',"id":"hx-other","subject"'), "id given twice with different values")
    duplicate("duplicate-id-same-value", sub(line("duplicate-id-same-value"), b',"subject"', b',"id":"hx-fields/duplicate-id-same-value","subject"'), "id given twice with the same value")
    duplicate("duplicate-type", sub(line("duplicate-type"), b',"id"', b',"type":"question.expired","id"'), "type given twice")
    duplicate("duplicate-state", line("duplicate-state")[:-1] + b',"state":"authorized"}', "state given twice, the second authorized")
    duplicate("duplicate-escaped-key", sub(line("duplicate-escaped-key"), b',"subject"', b',"\\u0069d":"hx-other","subject"'), "id and \\u0069d, the same name spelled twice")
    duplicate("duplicate-in-handle", J(observed(eid(g + "duplicate-in-handle"))).replace(b'"kind":"custom"}', b'"kind":"custom","kind":"phoneNumber"}', 1), "a handle's kind given twice")
    duplicate("duplicate-in-choice", J(ask(eid(g + "duplicate-in-choice"))).replace(b'"answer":"denial"', b'"answer":"denial","answer":"approval"', 1), "a choice's answer given twice")


def times_cases():
    g = "times/"

    def bad_time(name, field, text, expect, about):
        kind = g + name
        template = ask(eid(kind)) if field == "question.expiresAt" else perm_for(kind)
        case(kind, at(template, field, text), [field.split(".")[-1] + ":", expect], about)

    t = lambda name, text, expect, about: bad_time(name, "occurredAt", text, expect, about)
    t("no-offset", "2026-11-20T11:00:00", "no time zone", "no Z and no offset")
    t("no-offset-fraction", "2026-11-20T11:00:00.250", "no time zone", "a fraction and no time zone")
    t("month-13", "2026-13-20T11:00:00Z", "month 13 out of range", "month 13")
    t("month-00", "2026-00-20T11:00:00Z", "month 0 out of range", "month 00")
    t("day-32", "2026-10-32T11:00:00Z", "day 32 out of range", "October 32")
    t("day-00", "2026-11-00T11:00:00Z", "day 0 out of range", "day 00")
    t("day-31-in-30-day-month", "2026-11-31T11:00:00Z", "day 31 out of range", "November 31")
    t("feb-29-non-leap", "2026-02-29T11:00:00Z", "day 29 out of range", "February 29 of 2026, not a leap year")
    t("feb-29-century", "2100-02-29T11:00:00Z", "day 29 out of range", "February 29 of 2100 (divisible by 100, not by 400)")
    t("feb-30-leap", "2028-02-30T11:00:00Z", "day 30 out of range", "February 30 of a leap year")
    t("hour-24", "2026-11-20T24:00:00Z", "hour out of range", "hour 24")
    t("minute-60", "2026-11-20T11:60:00Z", "minute out of range", "minute 60")
    t("leap-second", "2026-12-31T23:59:60Z", "second out of range", "a leap second (:60), which the ledger cannot represent")
    t("seven-fraction-digits", "2026-11-20T11:00:00.1234567Z", "more than 6 fractional digits", "7 fractional digits")
    t("empty-fraction", "2026-11-20T11:00:00.Z", "no digit after '.'", "a '.' with no digits")
    t("comma-fraction", "2026-11-20T11:00:00,5Z", "no time zone", "a comma before the fraction (ISO 8601, not RFC 3339)")
    t("offset-without-minutes", "2026-11-20T11:00:00+01", "offset", "offset +01")
    t("offset-without-colon", "2026-11-20T11:00:00+0100", "offset", "offset +0100")
    t("offset-hour-24", "2026-11-20T11:00:00+24:00", "offset out of range", "offset +24:00")
    t("offset-minute-60", "2026-11-20T11:00:00+01:60", "offset out of range", "offset +01:60")
    t("offset-named-zone", "2026-11-20T11:00:00 UTC", "no time zone", "a zone name instead of an offset")
    t("offset-and-z", "2026-11-20T11:00:00+00:00Z", "unexpected text after the time zone", "an offset followed by Z")
    t("double-z", "2026-11-20T11:00:00ZZ", "unexpected text after the time zone", "ZZ")
    t("trailing-space", "2026-11-20T11:00:00Z ", "unexpected text after the time zone", "a space after Z")
    t("leading-space", " 2026-11-20T11:00:00Z", "expected a digit", "a space before the year")
    t("space-instead-of-t", "2026-11-20 11:00:00Z", "expected 'T'", "a space between date and time")
    t("date-only", "2026-11-20", "expected 'T'", "a date without a time")
    t("time-only", "11:00:00Z", "RFC 3339", "a time without a date")
    t("two-digit-year", "26-11-20T11:00:00Z", "RFC 3339", "a two-digit year")
    t("five-digit-year", "12026-11-20T11:00:00Z", "RFC 3339", "a five-digit year")
    t("negative-year", "-2026-11-20T11:00:00Z", "expected a digit", "a negative year")
    t("single-digit-month", "2026-1-20T11:00:00Z", "RFC 3339", "a one-digit month")
    t("no-seconds", "2026-11-20T11:00Z", "RFC 3339", "no seconds")
    t("slashes", "2026/11/20T11:00:00Z", "expected '-'", "slashes in the date")
    t("fullwidth-digits", "２０２６-11-20T11:00:00Z", "expected a digit", "full-width digits")
    t("empty", "", "ends too early", "an empty string")
    t("year-0-before-utc", "0000-01-01T00:00:00+01:00", "outside the years 0000 to 9999", "year 0 with a +01:00 offset: before 0000-01-01 in UTC")
    t("year-9999-after-utc", "9999-12-31T23:59:59-01:00", "outside the years 0000 to 9999", "the last second of 9999 at -01:00: after 9999 in UTC")
    bad_time("recorded-at-no-offset", "recordedAt", "2026-11-20T11:00:01", "no time zone", "recordedAt without a time zone")
    bad_time("recorded-at-month-13", "recordedAt", "2026-13-20T11:00:01Z", "month 13 out of range", "recordedAt in month 13")
    bad_time("expires-at-no-offset", "question.expiresAt", "2026-11-21T11:00:00", "no time zone", "expiresAt without a time zone")
    bad_time("expires-at-day-32", "question.expiresAt", "2026-12-32T11:00:00Z", "day 32 out of range", "expiresAt on December 32")


def envelope_cases():
    g = "envelope/"

    def k(name, path, value, expect, about, template=None):
        kind = g + name
        case(kind, at((template or perm)(eid(kind)), path, value), expect, about)

    k("type-unknown", "type", "question.deleted", ["type:", "is not one of"], "an event type that does not exist")
    k("type-wrong-case", "type", "Permission.Changed", ["type:", "is not one of"], "the type with capitals")
    k("type-trailing-space", "type", "permission.changed ", ["type:", "is not one of"], "the type with a trailing space")
    k("type-empty", "type", "", ["type:", "is not one of"], "an empty type")
    k("type-underscore", "type", "permission_changed", ["type:", "is not one of"], "permission_changed instead of permission.changed")
    k("id-empty", "id", "", "id: must not be empty", "an empty event id")
    k("id-129-bytes", "id", "x" * 129, "id: is 129 bytes long; at most 128", "an event id of 129 bytes")
    k("id-129-bytes-multibyte", "id", "é" * 64 + "x", "id: is 129 bytes long", "64 two-byte characters and one more byte: 65 characters, 129 bytes")
    k("id-bell", "id", "hx-\u0007", "id: holds U+0007 (a control character)", "a BEL in the event id")
    k("subject-empty", "subject", "", "subject: must not be empty", "an empty subject")
    k("subject-257-bytes", "subject", "k" * 257, "subject: is 257 bytes long; at most 256", "a subject of 257 bytes")
    k("subject-control", "subject", "kid\u0008ava", "subject: holds U+0008 (a control character)", "a backspace in the subject")
    k("subject-c1", "subject", "kid\u009bava", "subject: holds U+009B (a control character)", "U+009B (CSI, a C1 control) in the subject")
    k("hash-uppercase", "hash", "A" * 64, "hash: must be 64 lowercase hex digits", "an uppercase hash")
    k("hash-63-digits", "hash", "0" * 63, "hash: must be 64 lowercase hex digits", "a hash of 63 digits")
    k("hash-65-digits", "hash", "0" * 65, "hash: must be 64 lowercase hex digits", "a hash of 65 digits")
    k("hash-non-hex", "hash", "g" * 64, "hash: must be 64 lowercase hex digits", "a hash of g's")
    k("hash-empty", "hash", "", "hash: must be 64 lowercase hex digits", "an empty hash")
    k("hash-prefixed", "hash", "sha256:" + "0" * 64, "hash: must be 64 lowercase hex digits", "a hash with a sha256: prefix")
    k("question-id-not-uuid", "question.id", "not-a-uuid", ["question.id:", "is not a UUID"], "a question id that is not a UUID", template=ask)
    k("question-id-no-dashes", "question.id", "6A3F1C2EDEAD40008000000000000999", ["question.id:", "is not a UUID"], "a UUID without dashes", template=ask)
    k("question-id-braces", "question.id", "{6A3F1C2E-DEAD-4000-8000-000000000999}", ["question.id:", "is not a UUID"], "a UUID in braces", template=ask)
    k("question-id-urn", "question.id", "urn:uuid:6A3F1C2E-DEAD-4000-8000-000000000999", ["question.id:", "is not a UUID"], "a UUID as a URN", template=ask)
    k("question-id-non-hex", "question.id", "6A3F1C2E-DEAD-4000-8000-00000000099G", ["question.id:", "is not a UUID"], "a UUID with a G", template=ask)
    k("question-id-37-chars", "question.id", "6A3F1C2E-DEAD-4000-8000-0000000009990", ["question.id:", "is not a UUID"], "a UUID with one digit too many", template=ask)
    k("question-id-empty", "question.id", "", ["question.id:", "is not a UUID"], "an empty question id", template=ask)
    k("question-id-ref-short", "questionId", Q(1)[:-1], ["questionId:", "is not a UUID"], "questionId one digit short", template=answer)
    k("question-id-ref-spaces", "questionId", " " + Q(1) + " ", ["questionId:", "is not a UUID"], "questionId padded with spaces", template=answer)


def handles_cases():
    g = "handles/"
    P = "question.topic.communication.people.0.handle"

    def h(name, value, kind, expect, about):
        case(g + name, at(at(ask(eid(g + name)), P + ".value", value), P + ".kind", kind),
             ["people[0].handle", expect], about)

    h("kind-unknown", "orbit", "username", "is not one of", "handle kind username")
    h("kind-wrong-case", "orbit", "Custom", "is not one of", "handle kind Custom")
    h("kind-empty", "orbit", "", "is not one of", "an empty handle kind")
    h("phone-two-digits", "12", "phoneNumber", "is not a phone number", "a phone number of 2 digits")
    h("phone-21-digits", "+123456789012345678901", "phoneNumber", "is not a phone number", "a phone number of 21 digits")
    h("phone-letters", "+1 555 CALL NOW", "phoneNumber", "is not a phone number", "letters in a phone number")
    h("phone-plus-only", "+", "phoneNumber", "is not a phone number", "a lone +")
    h("phone-two-plus", "++15550100", "phoneNumber", "is not a phone number", "two leading +")
    h("phone-inner-plus", "555+0100", "phoneNumber", "is not a phone number", "a + after digits")
    h("phone-separators-only", "(--..)", "phoneNumber", "is not a phone number", "only separators")
    h("phone-empty", "", "phoneNumber", "is not a phone number", "an empty phone number")
    h("phone-arabic-digits", "٥٥٥٠١٠٠", "phoneNumber", "is not a phone number", "Arabic-Indic digits")
    h("phone-slash", "555/0100", "phoneNumber", "is not a phone number", "a slash in a phone number")
    h("phone-extension", "+1 555 0100 ext. 7", "phoneNumber", "is not a phone number", "an extension")
    h("email-no-at", "mom.example.com", "emailAddress", "is not an email address", "an email without @")
    h("email-two-at", "mom@home@example.com", "emailAddress", "is not an email address", "an email with two @")
    h("email-empty-local", "@example.com", "emailAddress", "is not an email address", "nothing before @")
    h("email-empty-domain", "mom@", "emailAddress", "is not an email address", "nothing after @")
    h("email-inner-space", "mom @example.com", "emailAddress", "is not an email address", "a space inside an email")
    h("email-inner-nbsp", "mom\u00a0x@example.com", "emailAddress", "is not an email address", "a no-break space inside an email")
    h("email-control", "mom\u0001@example.com", "emailAddress", "is not an email address: it holds U+0001 (a control character)", "a control character inside an email")
    h("email-only-at", "@", "emailAddress", "is not an email address", "only @")
    h("email-empty", "", "emailAddress", "is not an email address", "an empty email")
    h("email-whitespace-only", "   ", "emailAddress", "is not an email address", "an email of spaces")
    h("custom-empty", "", "custom", "must not be empty", "an empty custom handle")
    h("custom-257-bytes", "c" * 257, "custom", "is 257 bytes long", "a custom handle of 257 bytes")
    h("custom-newline", "orb\nit", "custom", "value: holds U+000A (a control character)", "a newline in a custom handle")
    h("custom-del", "orb\u007fit", "custom", "value: holds U+007F (a control character)", "DEL in a custom handle")
    case(g + "observed-known-bad-phone", at(observed(eid(g + "observed-known-bad-phone")), "known.0", {"value": "1", "kind": "phoneNumber"}),
         ["known[0]", "is not a phone number"], "an invalid phone number among known handles")


def asked_cases():
    g = "asked/"

    def k(name, path, value, expect, about, template=ask):
        kind = g + name
        case(kind, at(template(eid(kind)), path, value), expect, about)

    k("topic-empty", "question.topic", {}, "must hold one of communication and significantAppUpdate", "an empty topic")
    k("topic-both", "question.topic", {"communication": {"people": [{"handle": {"value": "orbit", "kind": "custom"}}]},
                                       "significantAppUpdate": {"description": "v3"}}, "not both", "both topic kinds")
    k("topic-null-communication", "question.topic", {"communication": None}, "must hold one of communication and significantAppUpdate", "communication is null (counts as absent), no other topic")
    k("people-empty", "question.topic.communication.people", [], "people: must name at least one person", "no people")
    k("people-same-handle", "question.topic.communication.people", [
        {"handle": {"value": "+1 (555) 010-0099", "kind": "phoneNumber"}},
        {"handle": {"value": "+1.555.010.0099", "kind": "phoneNumber"}}], "people[1].handle: the same handle as people[0]", "the same phone spelled twice")
    k("people-same-email-case", "question.topic.communication.people", [
        {"handle": {"value": "Dad@Example.com", "kind": "emailAddress"}},
        {"handle": {"value": " dad@example.COM ", "kind": "emailAddress"}}], "people[1].handle: the same handle as people[0]", "the same email with other case and spaces")
    k("action-unknown", "question.topic.communication.actions", ["message", "teleport"], ["actions[1]", "is not one of"], "action teleport")
    k("action-wrong-case", "question.topic.communication.actions", ["Message"], ["actions[0]", "is not one of"], "action Message")
    k("description-empty", "question.topic.significantAppUpdate.description", "", "description: must be 1 to 4096 bytes long, not 0", "an empty update description", template=update)
    k("description-4097-bytes", "question.topic.significantAppUpdate.description", "d" * 4097, "description: must be 1 to 4096 bytes long, not 4097", "an update description of 4097 bytes", template=update)
    k("choices-empty", "question.choices", [], "question.choices: must offer at least one approval and one denial", "no choices")
    k("choices-no-approval", "question.choices", [{"id": "decline", "title": "Decline", "answer": "denial"}],
      "question.choices: must offer at least one approval", "only a denial")
    k("choices-no-denial", "question.choices", [{"id": "approve", "title": "Approve", "answer": "approval"}],
      "question.choices: must offer at least one denial", "only an approval")
    k("choice-ids-duplicate", "question.choices.1.id", "approve-1h", "choices[1].id: repeats the id", "two choices with id approve-1h")
    k("choice-id-empty", "question.choices.1.id", "", "choices[1].id: must not be empty", "an empty choice id")
    k("choice-title-empty", "question.choices.1.title", "", "choices[1].title: must not be empty", "an empty choice title")
    k("choice-answer-unknown", "question.choices.2.answer", "decline", ["choices[2].answer", "is not one of"], "answer decline instead of denial")
    k("choice-answer-wrong-case", "question.choices.1.answer", "Approval", ["choices[1].answer", "is not one of"], "answer Approval")
    k("grant-seconds-zero", "question.choices.0.grantSeconds", 0, "grantSeconds: must be a positive number", "grantSeconds 0")
    k("grant-seconds-negative", "question.choices.0.grantSeconds", -3600, "grantSeconds: must be a positive number", "grantSeconds -3600")
    k("grant-seconds-on-denial", "question.choices.2.grantSeconds", 60, "choices[2].grantSeconds: is allowed on approvals only", "grantSeconds on a denial")
    k("default-choice-unknown", "question.defaultChoice", "deny", "defaultChoice: \"deny\" is not one of the choices", "a defaultChoice that is not a choice")
    k("default-choice-empty", "question.defaultChoice", "", "defaultChoice: \"\" is not one of the choices", "an empty defaultChoice")
    k("default-choice-wrong-case", "question.defaultChoice", "Decline", "defaultChoice: \"Decline\" is not one of the choices", "defaultChoice Decline (ids are case-sensitive)")
    k("default-choice-unknown-odd-choice-ids", "question.choices", [
        {"id": "ok\"yes", "title": "Approve", "answer": "approval"},
        {"id": "back\\slash", "title": "Decline", "answer": "denial"}] + [{"id": "x" * 5000, "title": "Decline", "answer": "denial"}],
      "defaultChoice: \"decline\" is not one of the choices", "choice ids holding a quote, a backslash and 5000 bytes, which the message lists")
    k("default-choice-unknown-2000-choices", "question.choices",
      [{"id": "approve-%d" % n, "title": "Approve", "answer": "approval"} for n in range(1999)] + [{"id": "decline", "title": "Decline", "answer": "denial"}],
      "defaultChoice: \"maybe\" is not one of the choices", "2000 choices, none of them the defaultChoice", template=lambda id: at(ask(id), "question.defaultChoice", "maybe"))
    k("expires-at-equal", "question.expiresAt", OCC, "question.expiresAt: 2026-11-20T11:00:00Z is not later than occurredAt", "expiresAt equal to occurredAt")
    k("expires-at-equal-other-offset", "question.expiresAt", "2026-11-20T12:00:00+01:00", "is not later than occurredAt", "expiresAt the same instant as occurredAt, written at +01:00")
    k("expires-at-before", "question.expiresAt", "2026-11-20T10:59:59.999999Z", "is not later than occurredAt", "expiresAt one microsecond before occurredAt")
    k("question-id-reused", "question.id", Q(1), "was already asked at seq 1", "the id of a question in the base ledger")
    k("question-id-reused-lowercase", "question.id", Q(2).lower(), "was already asked at seq 2", "a question id of the base ledger in lowercase")


def followups_cases():
    g = "followups/"

    def k(name, event, expect, about, context=()):
        case(g + name, event, expect, about, context)

    e = lambda name: eid(g + name)
    not_pending = "is no longer pending"
    k("cancel-unknown-question", follow_up("question.sendCanceled", e("cancel-unknown-question"), 0x999), "is not in the ledger", "cancel a question never asked")
    k("cancel-approved", follow_up("question.sendCanceled", e("cancel-approved"), 2), not_pending, "cancel an approved question")
    k("cancel-denied", follow_up("question.sendCanceled", e("cancel-denied"), 3), not_pending, "cancel a denied question")
    k("cancel-canceled", follow_up("question.sendCanceled", e("cancel-canceled"), 4), not_pending, "cancel a canceled question again (another event id)")
    k("cancel-failed", follow_up("question.sendCanceled", e("cancel-failed"), 5), not_pending, "cancel a failed question")
    k("cancel-expired", follow_up("question.sendCanceled", e("cancel-expired"), 6), not_pending, "cancel a question expired by an event")
    k("cancel-other-subject", at(follow_up("question.sendCanceled", e("cancel-other-subject"), 8), "subject", "kid-ava"), "differs from question", "kid-ava cancels kid-ben's question")
    k("fail-approved", fail(e("fail-approved"), 2), not_pending, "askFailed for an approved question")
    k("fail-canceled", fail(e("fail-canceled"), 4), not_pending, "askFailed after a cancel")
    k("fail-failed", fail(e("fail-failed"), 5), not_pending, "askFailed twice")
    k("fail-expired", fail(e("fail-expired"), 6), not_pending, "askFailed after question.expired")
    k("fail-unknown-question", fail(e("fail-unknown-question"), 0x999), "is not in the ledger", "askFailed for a question never asked")
    k("fail-unknown-code", at(fail(e("fail-unknown-code")), "error.code", "timeout"), ["error.code", "is not one of"], "AskError code timeout")
    k("fail-code-wrong-case", at(fail(e("fail-code-wrong-case")), "error.code", "SystemError"), ["error.code", "is not one of"], "AskError code SystemError")
    k("expire-approved", follow_up("question.expired", e("expire-approved"), 2), not_pending, "expire an approved question")
    k("expire-denied", follow_up("question.expired", e("expire-denied"), 3), not_pending, "expire a denied question")
    k("expire-canceled", follow_up("question.expired", e("expire-canceled"), 4), not_pending, "expire a canceled question")
    k("expire-failed", follow_up("question.expired", e("expire-failed"), 5), not_pending, "expire a failed question")
    k("expire-twice", follow_up("question.expired", e("expire-twice"), 6), not_pending, "expire an expired question again")
    k("expire-unknown-question", follow_up("question.expired", e("expire-unknown-question"), 0x999), "is not in the ledger", "expire a question never asked")
    k("expire-other-subject", at(follow_up("question.expired", e("expire-other-subject"), 1), "subject", "kid-ben"), "differs from question", "kid-ben expires kid-ava's question")
    k("answer-unknown-question", answer(e("answer-unknown-question"), 0x999), "is not in the ledger", "answer a question never asked")
    k("answer-unknown-choice", answer(e("answer-unknown-choice"), 1, "approve-2h"), "choice \"approve-2h\" is not one of question", "a choice the question does not offer")
    k("answer-choice-wrong-case", answer(e("answer-choice-wrong-case"), 1, "Approve"), "choice \"Approve\" is not one of question", "choice Approve (ids are case-sensitive)")
    k("answer-choice-empty", answer(e("answer-choice-empty"), 1, ""), "choiceId: must not be empty", "an empty choiceId")
    k("answer-default-choice-of-other-question", answer(e("answer-default-choice-of-other-question"), 7, "approve-1h"), "is not one of question", "a choice of another question")
    k("answer-at-expiry", at(answer(e("answer-at-expiry"), 1), "occurredAt", "2026-11-20T12:00:00Z"), "at or after the question's expiresAt", "an answer at expiresAt exactly")
    k("answer-after-expiry", at(at(answer(e("answer-after-expiry"), 1), "occurredAt", "2026-11-20T12:30:00Z"), "recordedAt", "2026-11-20T12:30:01Z"), "at or after the question's expiresAt", "an answer after expiresAt")
    k("answer-after-expiry-offset", at(answer(e("answer-after-expiry-offset"), 1), "occurredAt", "2026-11-20T13:00:00+01:00"), "at or after the question's expiresAt", "an answer at expiresAt written at +01:00")
    k("answer-expired-by-event-after-expiry", answer(e("answer-expired-by-event-after-expiry"), 6), "at or after the question's expiresAt", "a late answer to a question expired by an event, but after its expiresAt")
    k("answer-canceled", answer(e("answer-canceled"), 4), "was canceled before it was sent", "answer a canceled question")
    k("answer-failed", answer(e("answer-failed"), 5), "failed to send", "answer a failed question")
    k("answer-conflicting-approved", answer(e("answer-conflicting-approved"), 2, "decline"), "a different answer (\"decline\") conflicts", "decline an approved question")
    k("answer-conflicting-denied", answer(e("answer-conflicting-denied"), 3, "approve"), "a different answer (\"approve\") conflicts", "approve a denied question")
    k("answer-other-subject", at(answer(e("answer-other-subject"), 8), "subject", "kid-ava"), "differs from question", "kid-ava answers kid-ben's question")
    k("answer-subject-case", at(answer(e("answer-subject-case"), 1), "subject", "Kid-Ava"), "differs from question", "the subject in other case")
    k("answer-via-unknown", at(answer(e("answer-via-unknown")), "via", "sms"), ["via", "is not one of"], "via sms")
    k("answer-via-wrong-case", at(answer(e("answer-via-wrong-case")), "via", "InPerson"), ["via", "is not one of"], "via InPerson")
    k("answer-in-file-conflict", answer(e("answer-in-file-conflict"), 1, "decline"), "conflicts",
      "an answer in the same file approved the question; this one declines it",
      context=[answer(e("answer-in-file-conflict") + "-first", 1, "approve")])
    k("answer-after-in-file-cancel", answer(e("answer-after-in-file-cancel"), 1), "was canceled before it was sent",
      "the question was canceled on the line before",
      context=[follow_up("question.sendCanceled", e("answer-after-in-file-cancel") + "-cancel", 1)])
    kind = g + "answer-unknown-choice-odd-choice-ids"
    asked = at(ask(eid(kind) + "-ask"), "question.choices", [
        {"id": "ok\"yes", "title": "Approve", "answer": "approval"},
        {"id": "no\\[2J", "title": "Decline", "answer": "denial"}])
    asked = at(asked, "question.defaultChoice", DEL)
    k("answer-unknown-choice-odd-choice-ids", at(at(answer(eid(kind)), "questionId", asked["question"]["id"]), "choiceId", "maybe"),
      "choice \"maybe\" is not one of question", "the question, asked on the line before, has choice ids holding a quote and a backslash, which the message lists",
      context=[asked])
    kind = g + "answer-in-file-question-unknown-choice"
    asked = ask(eid(kind) + "-ask")
    k("answer-in-file-question-unknown-choice",
      at(at(answer(eid(kind)), "questionId", asked["question"]["id"]), "choiceId", "approve-forever"),
      "choice \"approve-forever\" is not one of question", "the question is asked on the line before", context=[asked])


def observed_permission_cases():
    g = "observed/"
    e = lambda name: eid(g + name)
    case(g + "checked-empty", at(at(observed(e("checked-empty")), "checked", []), "known", []), "checked: must list at least one handle", "nothing checked")
    case(g + "known-not-subset", at(observed(e("known-not-subset")), "known.0", {"value": "stranger", "kind": "custom"}), "known[0]", "a known handle that was not checked")
    case(g + "known-not-subset-kind", at(observed(e("known-not-subset-kind")), "known.0.kind", "emailAddress"), "known[0]", "orbit as an email, not the custom handle checked (and not an email either)")
    case(g + "known-other-kind", at(at(observed(e("known-other-kind")), "known.0", {"value": "+1 555 010 0004", "kind": "custom"}), "checked.1.value", "+1 555 010 0004"),
         "is not among the checked handles", "a custom handle spelled like the checked phone number: another kind, another handle")
    case(g + "known-case-differs", at(observed(e("known-case-differs")), "known.0.value", "Orbit"), "is not among the checked handles", "Orbit known, orbit checked: custom handles are case-sensitive")
    case(g + "checked-invalid-handle", at(observed(e("checked-invalid-handle")), "checked.1.value", "call me"), ["checked[1]", "is not a phone number"], "an invalid phone number among checked handles")
    g = "permission/"
    e = lambda name: eid(g + name)
    case(g + "unknown-permission", at(perm(e("unknown-permission")), "permission", "teleport"), ["permission:", "is not one of"], "permission teleport")
    case(g + "permission-wrong-case", at(perm(e("permission-wrong-case")), "permission", "Camera"), ["permission:", "is not one of"], "permission Camera")
    case(g + "permission-ios-name", at(perm(e("permission-ios-name")), "permission", "NSCameraUsageDescription"), ["permission:", "is not one of"], "an Info.plist key instead of a permission")
    case(g + "unknown-state", at(perm(e("unknown-state")), "state", "granted"), ["state:", "is not one of"], "state granted")
    case(g + "state-wrong-case", at(perm(e("state-wrong-case")), "state", "Authorized"), ["state:", "is not one of"], "state Authorized")
    case(g + "state-empty", at(perm(e("state-empty")), "state", ""), ["state:", "is not one of"], "an empty state")
    case(g + "unknown-cause", at(perm(e("unknown-cause")), "cause", "user"), ["cause:", "is not one of"], "cause user")
    case(g + "cause-wrong-case", at(perm(e("cause-wrong-case")), "cause", "Settings"), ["cause:", "is not one of"], "cause Settings")


def erasure_cases():
    g = "erasure/"
    e = lambda name: erased(eid(g + name))
    case(g + "erasure-missing", at(e("erasure-missing"), "erasure", DEL), ["erasure:", "missing"], "subject.erased without its erasure")
    case(g + "erasure-null", at(e("erasure-null"), "erasure", None), "erasure:", "erasure is null")
    case(g + "erasure-string", at(e("erasure-string"), "erasure", "guardianRequest"), ["erasure:", "expected an object"], "the basis given as the erasure")
    case(g + "basis-missing", at(e("basis-missing"), "erasure.basis", DEL), ["erasure.basis:", "missing"], "an erasure without a basis")
    case(g + "basis-unknown", at(e("basis-unknown"), "erasure.basis", "becauseISaidSo"), ["erasure.basis:", "is not one of"], "basis becauseISaidSo")
    case(g + "basis-wrong-case", at(e("basis-wrong-case"), "erasure.basis", "GuardianRequest"), ["erasure.basis:", "is not one of"], "basis GuardianRequest")
    case(g + "basis-number", at(e("basis-number"), "erasure.basis", 0), ["erasure.basis:", "expected a string"], "the basis as its index")
    case(g + "reference-empty", at(e("reference-empty"), "erasure.reference", ""), ["erasure.reference:", "must not be empty"], "an empty reference")
    case(g + "reference-too-long", at(e("reference-too-long"), "erasure.reference", "r" * 129), ["erasure.reference:", "at most 128"], "a reference of 129 bytes")
    case(g + "reference-control", at(e("reference-control"), "erasure.reference", "case\u00074711"), ["erasure.reference:", "U+0007"], "a bell in the reference")
    case(g + "reference-newline", at(e("reference-newline"), "erasure.reference", "case\n4711"), ["erasure.reference:", "U+000A"], "a newline in the reference")
    case(g + "reference-bidi", at(e("reference-bidi"), "erasure.reference", "case\u202e1174"), ["erasure.reference:", "U+202E"], "a right-to-left override in the reference")
    case(g + "reference-number", at(e("reference-number"), "erasure.reference", 4711), ["erasure.reference:", "expected a string"], "the reference as a number")
    case(g + "unknown-field", at(e("unknown-field"), "erasure.requestedBy", "guardian"), ["erasure.requestedBy:", "unknown field"], "a field the erasure does not have")
    case(g + "before-without-offset", at(e("before-without-offset"), "erasure.before", "2026-11-20T08:00:00"), ["erasure.before:", "time zone"], "a cut without a time zone")
    case(g + "before-not-a-time", at(e("before-not-a-time"), "erasure.before", "yesterday"), ["erasure.before:", "is not an RFC 3339 time"], "a cut that is not a time")
    case(g + "before-seq", at(e("before-seq"), "erasure.before", "seq:3"), ["erasure.before:", "is not an RFC 3339 time"], "a cut given as a seq")
    case(g + "nothing-to-erase", at(e("nothing-to-erase"), "subject", "kid-nobody"), "nothing to erase", "an erasure of a subject with no event")


def text_cases():
    """docs/spec/EVENTS.md "Text": identifiers hold no character of Cc, Cf, Zl or Zp; free text no control character
    but tab and line feed. Messages name the character by its code point, never the value."""
    g = "text/"
    ident = "; identifiers may not hold control, format or separator characters"
    free = "; text may not hold control characters other than tab and line feed"
    H = "question.topic.communication.people.0.handle"
    N = "question.topic.communication.people.0.name"

    def k(name, template, path, value, expect, about):
        kind = g + name
        case(kind, at(template(eid(kind)), path, value), expect, about)

    k("id-zero-width-space", perm, "id", "hx-zw\u200bid", "id: holds U+200B (a format character)" + ident, "a zero-width space in the event id")
    k("subject-bidi-override", perm, "subject", "kid-\u202eava", "subject: holds U+202E (a format character)" + ident, "a right-to-left override in the subject")
    k("subject-zero-width-joiner", perm, "subject", "kid\u200dava", "subject: holds U+200D (a format character)" + ident, "a zero-width joiner in the subject")
    k("subject-byte-order-mark", perm, "subject", "\ufeffkid-ava", "subject: holds U+FEFF (a format character)" + ident, "a byte order mark before the subject")
    k("subject-soft-hyphen", perm, "subject", "kid\u00adava", "subject: holds U+00AD (a format character)" + ident, "a soft hyphen in the subject")
    k("subject-line-separator", perm, "subject", "kid\u2028ava", "subject: holds U+2028 (a line separator)" + ident, "U+2028 LINE SEPARATOR in the subject")
    k("subject-paragraph-separator", perm, "subject", "kid\u2029ava", "subject: holds U+2029 (a paragraph separator)" + ident, "U+2029 PARAGRAPH SEPARATOR in the subject")
    k("subject-tag-character", perm, "subject", "kid-ava\U000e0041", "subject: holds U+E0041 (a format character)" + ident, "a tag character (U+E0041) after the subject")
    k("custom-handle-zero-width-space", ask, H, {"value": "orb\u200bit", "kind": "custom"},
      "question.topic.communication.people[0].handle.value: holds U+200B (a format character)" + ident, "a zero-width space in a custom handle")
    k("email-zero-width-space", ask, H, {"value": "a\u200b@x.org", "kind": "emailAddress"},
      "people[0].handle.value: is not an email address: it holds U+200B (a format character)", "a zero-width space in an email address")
    k("email-bidi-override", ask, H, {"value": "mom@\u202eexample.com", "kind": "emailAddress"},
      "people[0].handle.value: is not an email address: it holds U+202E (a format character)", "a right-to-left override in an email's domain")
    k("phone-zero-width-space", ask, H, {"value": "+1 555\u200b010 0099", "kind": "phoneNumber"},
      "people[0].handle.value: is not a phone number: it holds U+200B (a format character)", "a zero-width space in a phone number")
    k("checked-custom-bidi-override", observed, "checked.0.value", "orb\u202eit", "checked[0].value: holds U+202E (a format character)" + ident, "a right-to-left override in an observed custom handle")
    k("choice-id-zero-width-space", ask, "question.choices.1.id", "approve\u200b", "question.choices[1].id: holds U+200B (a format character)" + ident, "a zero-width space after a choice id")
    k("choice-id-newline", ask, "question.choices.0.id", "ok\nyes", "question.choices[0].id: holds U+000A (a control character)" + ident, "a newline in a choice id")
    k("choice-id-escape", ask, "question.choices.2.id", "no\u001b[2J", "question.choices[2].id: holds U+001B (a control character)" + ident, "a terminal escape in a choice id")
    k("choice-id-ref-zero-width-space", answer, "choiceId", "approve\u200b", "choiceId: holds U+200B (a format character)" + ident, "a zero-width space after the answer's choiceId")
    k("given-name-escape", ask, N + ".givenName", "Sam\u001b[2J", "question.topic.communication.people[0].name.givenName: holds U+001B (a control character)" + free, "a terminal escape in a given name")
    k("family-name-carriage-return", ask, N + ".familyName", "Lee\r", "people[0].name.familyName: holds U+000D (a control character)" + free, "a carriage return after a family name")
    k("nickname-c1-control", ask, N + ".nickname", "\u009b31mSammy", "people[0].name.nickname: holds U+009B (a control character)" + free, "U+009B (CSI, a C1 control) in a nickname")
    k("name-prefix-nul", ask, N + ".namePrefix", "Dr\u0000", "people[0].name.namePrefix: holds U+0000 (a control character)" + free, "\\u0000 in a name prefix")
    k("title-bell", ask, "question.choices.1.title", "Approve\u0007", "question.choices[1].title: holds U+0007 (a control character)" + free, "a BEL in a choice's title")
    k("title-del", ask, "question.choices.2.title", "Decline\u007f", "question.choices[2].title: holds U+007F (a control character)" + free, "DEL in a choice's title")
    k("description-nul", update, "question.topic.significantAppUpdate.description", "Version\u00003", "significantAppUpdate.description: holds U+0000 (a control character)" + free, "\\u0000 in an update's description")
    k("description-vertical-tab", update, "question.topic.significantAppUpdate.description", "Version 3\u000badds calls", "significantAppUpdate.description: holds U+000B (a control character)" + free, "a vertical tab in an update's description")
    k("error-message-escape", fail, "error.message", "boom\u001b]0;owned\u0007", "error.message: holds U+001B (a control character)" + free, "a terminal title escape in an askFailed error's message")


def chain_cases():
    g = "chain/"
    e = lambda name: eid(g + name)
    reused = lambda **changes: {**PERM_BASE, **changes, "recordedAt": REC}
    case(g + "id-reused-other-state", reused(state="denied"), "is already used by seq", "the base's permission event id with another state")
    case(g + "id-reused-other-subject", reused(subject="kid-ben"), "is already used by seq", "the same id and content for another subject")
    case(g + "id-reused-other-occurred-at", reused(occurredAt="2026-11-20T08:14:30Z"), "is already used by seq", "the same event, occurredAt 30 seconds later")
    case(g + "id-reused-cause-dropped", {k: v for k, v in reused().items() if k != "cause"}, "is already used by seq", "the same event without its cause")
    case(g + "id-reused-other-type", {**follow_up("question.expired", PERM_BASE["id"], 1)}, "is already used by seq", "the id of the base's permission event on a question.expired")
    case(g + "id-reused-question-id-of-ask", at(at(ask(BASE[0]["id"]), "occurredAt", BASE[0]["occurredAt"]), "question.id", Q(1)), "is already used by seq", "the first base event's id on a question.asked that differs from it")
    case(g + "id-reused-in-file", at(perm(e("id-reused-in-file")), "state", "authorized"), "is already used by seq", "an event of the same file used the id with state denied",
         context=[perm(e("id-reused-in-file"))])
    case(g + "recorded-at-before-head", at(perm(e("recorded-at-before-head")), "recordedAt", "2026-11-20T08:00:00Z"), "is earlier than the previous event's", "recordedAt before the base's head")
    case(g + "recorded-at-one-microsecond-before-head", at(perm(e("recorded-at-one-microsecond-before-head")), "recordedAt", "2026-11-20T08:15:00.999999Z"),
         "is earlier than the previous event's", "recordedAt one microsecond before the head's")
    case(g + "recorded-at-before-head-by-offset", at(perm(e("recorded-at-before-head-by-offset")), "recordedAt", "2026-11-20T08:15:01+00:01"), "is earlier than the previous event's",
         "the head's recordedAt text, but at +00:01 it is a minute earlier")
    case(g + "recorded-at-before-previous-line", at(perm(e("recorded-at-before-previous-line")), "recordedAt", "2026-11-20T11:00:00Z"), "is earlier than the previous event's",
         "the line before was recorded a second later", context=[at(perm(e("recorded-at-before-previous-line") + "-first"), "state", "authorized")])
    seq = lambda name, value: at(perm(e(name)), "seq", value)
    case(g + "seq-skips", seq("seq-skips", HEAD_SEQ + 2), "does not match the position", "seq one past the next position")
    case(g + "seq-of-head", seq("seq-of-head", HEAD_SEQ), "does not match the position", "seq of the head itself")
    case(g + "seq-one", seq("seq-one", 1), "does not match the position", "seq 1 on a ledger that has events")
    case(g + "seq-far", seq("seq-far", 1000000), "does not match the position", "seq 1000000")
    case(g + "seq-repeated-in-file", seq("seq-repeated-in-file", HEAD_SEQ + 1), "does not match the position", "the line before took this seq",
         context=[seq("seq-repeated-in-file-first", HEAD_SEQ + 1)])
    case(g + "seq-skips-in-file", seq("seq-skips-in-file", HEAD_SEQ + 3), "does not match the position", "the line before took the next seq, this one skips one",
         context=[seq("seq-skips-in-file-first", HEAD_SEQ + 1)])
    hashed = lambda name, value, with_seq=True: at(seq(name, HEAD_SEQ + 1) if with_seq else perm(e(name)), "hash", value)
    case(g + "hash-zeros", hashed("hash-zeros", "0" * 64), "does not match the chain hash", "a hash of zeros with the right seq")
    case(g + "hash-made-up", hashed("hash-made-up", "3f1c2e6a" * 8), "does not match the chain hash", "a made-up hash")
    case(g + "hash-without-seq", hashed("hash-without-seq", "f" * 64, with_seq=False), "does not match the chain hash", "a made-up hash and no seq")
    case(g + "hash-and-wrong-seq", at(seq("hash-and-wrong-seq", HEAD_SEQ + 2), "hash", "0" * 64), "does not match the position", "wrong seq and wrong hash: the seq is named")


GROUPS = ["syntax", "bytes", "types", "numbers", "fields", "times", "envelope", "handles", "asked", "followups",
          "observed", "permission", "chain", "text", "erasure"]


def build():
    for make in [syntax_cases, bytes_cases, types_cases, numbers_cases, fields_cases, times_cases, envelope_cases,
                 handles_cases, asked_cases, followups_cases, observed_permission_cases, chain_cases, text_cases,
                 erasure_cases]:
        make()
    kinds = [c[0] for c in CASES]
    assert len(kinds) == len(set(kinds)), "case kinds repeat"
    files = {}
    for group in GROUPS:
        out = [b"# Hostile input: the " + group.encode() + b" cases. Generated by generate_hostile.py; do not edit.",
               b"# Each case: # case: KIND, # expect: text of the first error line, # about: what is wrong,",
               b"# then context lines (valid events, usually none) and, last, the bad line.",
               b""]
        for kind, expects, about, context, bad in CASES:
            if kind.split("/")[0] != group:
                continue
            assert b"\n" not in bad and not bad.endswith(b"\r"), kind
            stripped = bad.lstrip(b" \t")
            assert stripped and not stripped.startswith(b"#"), kind
            out.append(b"# case: " + kind.encode())
            for expect in expects:
                out.append(b"# expect: " + expect.encode())
            out.append(b"# about: " + about.encode())
            out.extend(context)
            out.append(bad)
            out.append(b"")
        files[group + ".cases"] = b"\n".join(out)
    for kind, _, _, _, _ in CASES:
        assert kind.split("/")[0] in GROUPS, kind
    base = [b"# The base ledger of the hostile-input cases: every case is imported into a copy of a ledger holding these.",
            b"# Generated by generate_hostile.py; do not edit. Head: seq %d, recordedAt %s." % (HEAD_SEQ, HEAD_RECORDED.encode())]
    base += [J(event) for event in BASE]
    files["base.jsonl"] = b"\n".join(base) + b"\n"
    return files


def main():
    files = build()
    check = "--check" in sys.argv[1:]
    stale = []
    for name, data in sorted(files.items()):
        path = os.path.join(HERE, name)
        if check:
            try:
                with open(path, "rb") as f:
                    if f.read() != data:
                        stale.append(name)
            except FileNotFoundError:
                stale.append(name)
        else:
            with open(path, "wb") as f:
                f.write(data)
    written = {name for name in os.listdir(HERE) if name.endswith(".cases")}
    extra = sorted(written - set(files))
    if check:
        if stale or extra:
            print("stale: " + ", ".join(stale + extra) + "; run python3 Tools/Fixtures/generate_hostile.py", file=sys.stderr)
            sys.exit(1)
        print("%d cases in %d files: up to date" % (len(CASES), len(files) - 1))
    else:
        print("%d cases in %d files" % (len(CASES), len(files) - 1))


if __name__ == "__main__":
    main()
