#!/usr/bin/env python3
"""Generate Fixtures/family-day.jsonl: one family's day, deterministically.

Four children (kid-ava, kid-ben, kid-cleo, kid-dev) on 2026-11-20, 07:00Z to
about 21:30Z, with every event type of docs/spec/EVENTS.md interleaved. The generator
keeps the acceptance state (question states, ids, expiry, recordedAt order) so
that it emits only events that are accepted, and it keeps the derived state
(docs/spec/EVENTS.md "State") so that it can write the expected final state into the
file's header comments.

Usage: python3 Tools/Fixtures/generate_family_day.py [OUTPUT]   (default:
Fixtures/family-day.jsonl). Same script, same output, byte for byte: the random
generator is seeded and nothing depends on the wall clock or on hash order.
"""
import json
import os
import random
import sys
from datetime import datetime, timedelta, timezone

SEED = 20261120
TARGET_EVENTS = 1200
START = datetime(2026, 11, 20, 7, 0, 0, tzinfo=timezone.utc)
END = datetime(2026, 11, 20, 21, 30, 0, tzinfo=timezone.utc)

SUBJECTS = ["kid-ava", "kid-ben", "kid-cleo", "kid-dev"]

ACTIONS = ["message", "audioCall", "videoCall", "call", "chat", "follow",
           "beFollowed", "friend", "connect", "communicate"]
ASK_ERRORS = ["communicationLimitsNotEnabled", "contactSyncNotSetup", "invalidQuestion",
              "notAvailable", "systemError", "unknown"]
ERROR_MESSAGES = {
    "communicationLimitsNotEnabled": "Communication Limits are not turned on in Screen Time.",
    "contactSyncNotSetup": "Contacts are not synced with iCloud.",
    "notAvailable": "Asking is not available right now.",
    "systemError": "underlying error: NSCocoaErrorDomain Code=4097",
}
PERMISSIONS = ["camera", "microphone", "contacts", "photoLibrary", "photoLibraryAddOnly",
               "locationWhenInUse", "locationAlways", "notifications", "calendars", "reminders",
               "motion", "health", "bluetooth", "speechRecognition", "siri", "mediaLibrary",
               "tracking", "localNetwork"]
COMMON_PERMISSIONS = ["camera", "microphone", "contacts", "photoLibrary", "notifications",
                      "locationWhenInUse", "localNetwork", "bluetooth"]


# ---------------------------------------------------------------- contacts --

def phone(digits10, name=None):
    """A fictional North American 555-01xx number with several spellings."""
    a, b, c = digits10[:3], digits10[3:6], digits10[6:]
    spellings = [f"+1 {a} {b} {c}", f"+1 ({a}) {b}-{c}", f"+1.{a}.{b}.{c}", f"+1{a}{b}{c}",
                 f"+1-{a}-{b}-{c}"]
    return {"kind": "phoneNumber", "norm": f"+1{digits10}", "spellings": spellings, "name": name}


def email(addr, name=None):
    local, domain = addr.split("@")
    spellings = [addr, local.title() + "@" + domain, local + "@" + domain.upper(), addr.upper()]
    return {"kind": "emailAddress", "norm": addr.lower(), "spellings": spellings, "name": name}


def custom(value, name=None):
    return {"kind": "custom", "norm": value, "spellings": [value], "name": name}


SHARED = [
    phone("5550100101", {"givenName": "Rose", "familyName": "Whitaker", "nickname": "Grandma"}),
    email("grandpa.joe@example.com", {"givenName": "Joe", "familyName": "Whitaker", "nickname": "Grandpa"}),
    phone("5550100102", {"namePrefix": "Dr.", "givenName": "Maya", "familyName": "Okafor"}),
]

POOLS = {
    "kid-ava": SHARED + [
        custom("dragonslayer42", {"givenName": "Alex", "familyName": "Smith"}),
        custom("bluejay_22"),
        email("lily.chen@example.com", {"givenName": "Lily", "familyName": "Chen"}),
        phone("5550100111", {"givenName": "Noah"}),
        phone("5550100112", {"givenName": "Emma", "familyName": "Ruiz"}),
        custom("Comet.Rider"),
        email("coach.miller@example.org", {"namePrefix": "Coach", "familyName": "Miller"}),
    ],
    "kid-ben": SHARED + [
        custom("robo_rex"),
        custom("sk8rboi", {"nickname": "Sk8r"}),
        phone("5550100121", {"givenName": "Liam", "familyName": "Park"}),
        email("aunt.jo@example.net", {"givenName": "Joanna", "nickname": "Aunt Jo"}),
        custom("PixelPal"),
        custom("pixelpal"),
        phone("5550100122"),
    ],
    "kid-cleo": SHARED + [
        custom("Skater_Girl.99", {"givenName": "Zoe"}),
        email("luna.park@example.com", {"givenName": "Luna", "familyName": "Park"}),
        phone("5550100131", {"givenName": "Mia", "middleName": "Rose", "familyName": "Diaz"}),
        custom("ninja_cat"),
        email("tutor@school.example", {"givenName": "Priya", "familyName": "Raman", "nameSuffix": "PhD"}),
        phone("5550100132"),
    ],
    "kid-dev": SHARED + [
        custom("gr8_gamer"),
        custom("quietfox", {"nickname": "Fox"}),
        phone("5550100141", {"givenName": "Omar", "familyName": "Haddad"}),
        email("oliver.bennett@example.co.uk", {"givenName": "Oliver", "familyName": "Bennett"}),
        custom("mysterygamer77"),
        phone("5550100142", {"givenName": "Ivy"}),
    ],
}

UPDATE_DESCRIPTIONS = [
    "Version 5.0 adds public multiplayer lobbies.",
    "Version 5.1 lets players share photos in chat.",
    "This update adds voice chat with friends of friends.",
    "The new version shows a public profile page.",
]

CHOICE_TEMPLATES = [
    # (weight, choices or None for the default pair, defaultChoice or None)
    (40, None, None),
    (20, [{"id": "approve-1h", "title": "Approve for one hour", "answer": "approval", "grantSeconds": 3600},
          {"id": "approve", "title": "Approve", "answer": "approval"},
          {"id": "decline", "title": "Decline", "answer": "denial"}], "decline"),
    (15, [{"id": "approve-30m", "title": "Approve for 30 minutes", "answer": "approval", "grantSeconds": 1800},
          {"id": "approve-day", "title": "Approve for today", "answer": "approval", "grantSeconds": 43200},
          {"id": "not-now", "title": "Not now", "answer": "denial"},
          {"id": "block", "title": "Block", "answer": "denial"}], "block"),
    (15, [{"id": "allow", "title": "Allow", "answer": "approval"},
          {"id": "dont-allow", "title": "Don't Allow", "answer": "denial"},
          {"id": "never", "title": "Never", "answer": "denial"}], None),
    (10, [{"id": "approve", "title": "Approve", "answer": "approval"},
          {"id": "decline", "title": "Decline", "answer": "denial"}], "approve"),
]
DEFAULT_CHOICES = [{"id": "approve", "title": "Approve", "answer": "approval"},
                   {"id": "decline", "title": "Decline", "answer": "denial"}]


# ------------------------------------------------------------------ helpers --

def fmt(dt):
    """RFC 3339 in UTC; milliseconds only when the fraction is not zero."""
    s = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if dt.microsecond:
        s += ".%03d" % (dt.microsecond // 1000)
    return s + "Z"


def fmt_out(dt):
    """As docs/spec/EVENTS.md writes times back: six fractional digits when not zero."""
    if dt is None:
        return "null"
    s = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if dt.microsecond:
        s += ".%06d" % dt.microsecond
    return s + "Z"


def weighted(rng, items):
    total = sum(w for w, *_ in items)
    r = rng.uniform(0, total)
    for item in items:
        r -= item[0]
        if r <= 0:
            return item
    return items[-1]


# ---------------------------------------------------------------- generator --

class Day:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.lines = []
        self.now = START
        self.n_events = 0
        self.n_questions = 0
        self.questions = {}        # qid -> acceptance + derived state
        self.order = []            # qids in asking order
        self.known = {}            # (subject, kind, norm) -> {known, since, until, source}
        self.perms = {}            # (subject, permission) -> (state, since)
        self.counts = {}
        self.snapshot = None

    # -- event output ----------------------------------------------------
    def emit(self, typ, subject, occurred, payload):
        self.n_events += 1
        ev = {"type": typ, "id": "fd-%05d" % self.n_events, "subject": subject,
              "occurredAt": fmt(occurred), "recordedAt": fmt(self.now)}
        ev.update(payload)
        self.lines.append(json.dumps(ev, ensure_ascii=False, separators=(",", ":")))
        self.last_recorded = self.now
        self.counts[typ] = self.counts.get(typ, 0) + 1
        return self.n_events

    def occurred(self):
        """occurredAt for an event recorded now: a second or a few earlier."""
        ms = self.rng.choice([1000, 1000, 2000, 2000, 3000, 1500, 2250])
        return self.now - timedelta(milliseconds=ms)

    # -- derived state: known handles ---------------------------------------
    def approve_handle(self, subject, h, occ, rec, until, qid):
        key = (subject, h["kind"], h["norm"])
        cur = self.known.get(key)
        if until is not None and cur and cur["known"] and self._keeps(cur, until, occ):
            return  # a time-limited approval never shortens a current, longer one
        self.known[key] = {"known": True, "since": occ, "until": until, "source": ("question", qid)}

    @staticmethod
    def _keeps(cur, until, at):
        current = cur["until"] is None or cur["until"] > at
        longer = cur["until"] is None or cur["until"] > until
        return current and longer

    def grant_is_ambiguous(self, subject, handles, occ, rec, until):
        """True when "current" at occurredAt and at recordedAt would disagree."""
        for h in handles:
            cur = self.known.get((subject, h["kind"], h["norm"]))
            if cur and cur["known"] and self._keeps(cur, until, occ) != self._keeps(cur, until, rec):
                return True
        return False

    # -- actions ------------------------------------------------------------
    def ask(self):
        rng = self.rng
        subject = rng.choice(SUBJECTS)
        self.n_questions += 1
        qid = "FAD10000-0000-4000-8000-%012d" % self.n_questions
        occ = self.occurred()
        q = {}
        if rng.random() < 0.12:
            topic = {"significantAppUpdate": {"description": rng.choice(UPDATE_DESCRIPTIONS)}}
            handles = []
        else:
            people_n = weighted(rng, [(70, 1), (20, 2), (10, 3)])[1]
            contacts = rng.sample(POOLS[subject], people_n)
            people = []
            for c in contacts:
                p = {"handle": {"value": rng.choice(c["spellings"]), "kind": c["kind"]}}
                if c["name"] and rng.random() < 0.7:
                    p["name"] = dict(c["name"])
                people.append(p)
            handles = [{"kind": c["kind"], "norm": c["norm"]} for c in contacts]
            comm = {"people": people}
            k = weighted(rng, [(10, 0), (45, 1), (30, 2), (15, 3)])[1]
            if k or rng.random() < 0.5:
                acts = rng.sample(ACTIONS, k)
                if acts and rng.random() < 0.2:
                    acts.append(rng.choice(acts))      # a duplicate, folded by the ledger
                rng.shuffle(acts)
                comm["actions"] = acts
            topic = {"communication": comm}
        question = {"id": qid, "topic": topic}
        _, choices, default = weighted(rng, CHOICE_TEMPLATES)
        if choices is not None:
            question["choices"] = [dict(c) for c in choices]
        if default is not None:
            question["defaultChoice"] = default
        choices = choices or DEFAULT_CHOICES
        if default is None:
            default = next(c["id"] for c in choices if c["answer"] == "denial")
        expires = None
        if rng.random() < 0.5:
            expires = occ + timedelta(minutes=rng.choice([10, 30, 60, 120, 1440]))
            question["expiresAt"] = fmt(expires)
        self.emit("question.asked", subject, occ, {"question": question})
        q.update(id=qid, subject=subject, asked=occ, expires=expires, handles=handles,
                 choices={c["id"]: c for c in choices}, choice_list=choices, default=default,
                 status="pending", state="pending", late=False, expired_event=False,
                 ignored=rng.random() < 0.15)   # the guardian does not answer in time
        self.questions[qid] = q
        self.order.append(qid)
        return True

    def pending(self, pred):
        return [self.questions[i] for i in self.order
                if self.questions[i]["status"] == "pending" and pred(self.questions[i])]

    def not_past_expiry(self, q):
        return q["expires"] is None or q["expires"] > self.now

    def cancel(self):
        cands = self.pending(lambda q: self.now - q["asked"] <= timedelta(minutes=3) and self.not_past_expiry(q))
        if not cands:
            return False
        q = self.rng.choice(cands)
        occ = self.occurred()
        self.emit("question.sendCanceled", q["subject"], occ, {"questionId": q["id"]})
        q.update(status="canceled", state="canceled")
        return True

    def fail(self):
        cands = self.pending(lambda q: self.now - q["asked"] <= timedelta(minutes=2) and self.not_past_expiry(q))
        if not cands:
            return False
        q = self.rng.choice(cands)
        code = self.rng.choice(ASK_ERRORS)
        err = {"code": code}
        if code in ERROR_MESSAGES and self.rng.random() < 0.7:
            err["message"] = ERROR_MESSAGES[code]
        self.emit("question.askFailed", q["subject"], self.occurred(), {"questionId": q["id"], "error": err})
        q.update(status="failed", state="failed")
        return True

    def expire(self):
        if self.n_events >= TARGET_EVENTS - 150:
            return False    # no app-side sweeps late in the day: some questions expire by the clock
        cands = self.pending(lambda q: self.now - q["asked"] >= timedelta(minutes=20)
                             or not self.not_past_expiry(q))
        if not cands:
            return False
        q = self.rng.choice(cands)
        self.emit("question.expired", q["subject"], self.occurred(), {"questionId": q["id"]})
        q.update(status="expired", state="expired", expired_event=True)
        return True

    def answer(self):
        rng = self.rng
        cands = [self.questions[i] for i in self.order
                 if (self.questions[i]["status"] == "expired"
                     or (self.questions[i]["status"] == "pending" and not self.questions[i]["ignored"]))
                 and self.now - self.questions[i]["asked"] >= timedelta(seconds=40)]
        if not cands:
            return False
        q = rng.choice(cands)
        if q["status"] == "expired" and rng.random() < 0.6:
            return False    # most questions the app gave up on never get an answer
        occ = self.occurred()
        if q["expires"] is not None and occ >= q["expires"]:
            # Only a response the guardian sent before expiresAt can still
            # arrive: a delayed delivery, recorded now, late.
            if rng.random() < 0.7:
                return False
            lo, hi = q["asked"] + timedelta(seconds=30), q["expires"] - timedelta(seconds=1)
            if hi <= lo:
                return False
            occ = lo + timedelta(seconds=rng.randint(0, int((hi - lo).total_seconds())))
        via = weighted(rng, [(55, None), (15, "messages"), (15, "inPerson"), (15, "default")])[1]
        if via == "default":
            choice = q["choices"][q["default"]]
        else:
            want = "approval" if (via == "inPerson" or rng.random() < 0.6) else "denial"
            choice = rng.choice([c for c in q["choice_list"] if c["answer"] == want])
        until = None
        if choice["answer"] == "approval" and "grantSeconds" in choice:
            until = occ + timedelta(seconds=choice["grantSeconds"])
            if self.grant_is_ambiguous(q["subject"], q["handles"], occ, self.now, until):
                choice = next(c for c in q["choice_list"] if c["answer"] == "denial")
                via, until = "messages", None
        payload = {"questionId": q["id"], "choiceId": choice["id"]}
        if via is not None:
            payload["via"] = via
        self.emit("question.answered", q["subject"], occ, payload)
        late = q["expired_event"] or (q["expires"] is not None and self.now >= q["expires"])
        state = "approved" if choice["answer"] == "approval" else "denied"
        q.update(status=state, state=state, late=late, choice=choice["id"])
        if state == "approved":
            for h in q["handles"]:
                self.approve_handle(q["subject"], h, occ, self.now, until, q["id"])
        return True

    def observe(self):
        rng = self.rng
        subject = rng.choice(SUBJECTS)
        contacts = rng.sample(POOLS[subject], rng.randint(1, 4))
        checked, known, verdict = [], [], []
        for c in contacts:
            checked.append({"value": rng.choice(c["spellings"]), "kind": c["kind"]})
            cur = self.known.get((subject, c["kind"], c["norm"]))
            in_set = bool(cur and cur["known"] and (cur["until"] is None or cur["until"] > self.now))
            is_known = in_set != (rng.random() < 0.2)      # the system mostly agrees
            if is_known:   # possibly spelled differently from the checked handle
                known.append({"value": rng.choice(c["spellings"]), "kind": c["kind"]})
            verdict.append(is_known)
        occ = self.occurred()
        seq = self.emit("handles.observed", subject, occ, {"checked": checked, "known": known})
        for c, is_known in zip(contacts, verdict):
            self.known[(subject, c["kind"], c["norm"])] = {
                "known": is_known, "since": occ, "until": None, "source": ("observation", seq)}
        return True

    def permission(self):
        rng = self.rng
        subject = rng.choice(SUBJECTS)
        perm = rng.choice(COMMON_PERMISSIONS) if rng.random() < 0.85 else rng.choice(PERMISSIONS)
        cur = self.perms.get((subject, perm), ("notDetermined", None))[0]
        if cur in ("notDetermined", "askAgain"):
            options = [(25, "askAgain", "prePrompt"), (10, "doNotAskAgain", "prePrompt"),
                       (35, "authorized", "systemPrompt"), (20, "denied", "systemPrompt"),
                       (3, "restricted", "inferred"), (2, "unsupported", None)]
            if perm == "photoLibrary":
                options.append((15, "limited", "systemPrompt"))
            if perm == "notifications":
                options.append((15, "provisional", "systemPrompt"))
            if cur == "askAgain":
                options = [o for o in options if o[1] != "askAgain"]
            elif (subject, perm) not in self.perms:
                options.append((10, "notDetermined", "inferred"))
        elif cur == "doNotAskAgain":
            options = [(50, "denied", "settings"), (30, "authorized", "settings"), (20, "notDetermined", "reset")]
        elif cur in ("unsupported", "restricted"):
            options = [(100, "notDetermined", "reset")]
        else:   # authorized, denied, limited, provisional
            options = [(35, "denied" if cur != "denied" else "authorized", "settings"),
                       (20, "notDetermined", "reset"), (10, "authorized", "inferred")]
            if cur == "authorized":
                options[-1] = (10, "denied", "inferred")
        _, state, cause = weighted(rng, options)
        payload = {"permission": perm, "state": state}
        if cause is not None:
            payload["cause"] = cause
        occ = self.occurred()
        self.emit("permission.changed", subject, occ, payload)
        self.perms[(subject, perm)] = (state, occ)
        return True

    # -- the day --------------------------------------------------------------
    def run(self):
        rng = self.rng
        actions = [(24, self.ask), (26, self.answer), (5, self.cancel), (4, self.fail),
                   (8, self.expire), (14, self.observe), (16, self.permission)]
        while self.n_events < TARGET_EVENTS and self.now < END:
            self.now += timedelta(seconds=rng.randint(5, 70), milliseconds=rng.choice([0, 0, 0, 250, 500]))
            for _ in range(5):
                if weighted(rng, actions)[1]():
                    break
            if self.n_events >= TARGET_EVENTS // 2 and self.snapshot is None:
                self.snapshot = self.summary()

    # -- expected state ---------------------------------------------------------
    def summary(self):
        clock = self.last_recorded      # the head's clock: recordedAt of the last event
        by_subject = {}
        for qid in self.order:
            q = self.questions[qid]
            st = q["state"]
            if st == "pending" and q["expires"] is not None and q["expires"] <= clock:
                st = "expired (by the clock)"
            if q["late"]:
                st += ", late"
            d = by_subject.setdefault(q["subject"], {})
            d[st] = d.get(st, 0) + 1
        handles = {}
        for (subject, kind, norm), k in self.known.items():
            if k["known"] and (k["until"] is None or k["until"] > clock):
                handles.setdefault(subject, []).append((kind, norm, k))
        return {"seq": self.n_events, "clock": clock, "questions": by_subject, "handles": handles,
                "perms": dict(self.perms)}


def header(day, final):
    out = []
    w = out.append
    w("# GENERATED by generate_family_day.py (seed %d): do not edit by hand, rerun the script." % SEED)
    w("# Scenario: one family's day, 2026-11-20, four children (%s), with" % ", ".join(SUBJECTS))
    w("# every event type interleaved: questions about 1-3 people (all handle kinds, varied")
    w("# spellings of the same phone/email), significant-update questions, default and custom")
    w("# choices with time-limited approvals, answers via messages/inPerson/default, late and")
    w("# delayed answers, cancels, ask failures, app-side expiries, handles.observed and")
    w("# permission changes. Every event is valid; no duplicates: every line is appended.")
    w("# Event ids fd-00001.. ; question ids FAD10000-0000-4000-8000-000000000001.. in order.")
    w("#")
    w("# Events: %d (%s)." % (day.n_events, ", ".join("%s %d" % (t, day.counts[t]) for t in sorted(day.counts))))
    for label, s in (("Final state", final), ("Midway", day.snapshot)):
        w("#")
        w("# %s (as of seq:%d, clock %s):" % (label, s["seq"], fmt_out(s["clock"])))
        w("# Questions by state (\"expired\" = by a question.expired event; \"late\" = answered late):")
        for subject in SUBJECTS:
            qs = s["questions"].get(subject, {})
            w("#   %s: %s" % (subject, ", ".join("%s %d" % (k, qs[k]) for k in sorted(qs)) or "none"))
        if label == "Midway":
            w("# Known handles (count): " + ", ".join(
                "%s %d" % (subj, len(s["handles"].get(subj, []))) for subj in SUBJECTS))
            continue
        w("# Known handles (ordered by kind, then value; until null unless shown):")
        for subject in SUBJECTS:
            hs = sorted(s["handles"].get(subject, []), key=lambda x: (x[0], x[1]))
            w("#   %s: %d" % (subject, len(hs)))
            for kind, norm, k in hs:
                src = ("question %s" % k["source"][1]) if k["source"][0] == "question" \
                    else ("observation seq %d" % k["source"][1])
                until = "" if k["until"] is None else ", until %s" % fmt_out(k["until"])
                w("#     %s %s (since %s%s, source %s)" % (kind, norm, fmt_out(k["since"]), until, src))
        w("# Permissions (state, since; canPrompt only in notDetermined and askAgain):")
        for subject in SUBJECTS:
            ps = sorted((p, v) for (subj, p), v in s["perms"].items() if subj == subject)
            w("#   %s: %s" % (subject, "; ".join("%s %s (%s)" % (p, st, fmt_out(since)) for p, (st, since) in ps)))
    return out


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Fixtures", "family-day.jsonl")
    day = Day(SEED)
    day.run()
    final = day.summary()
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in header(day, final) + day.lines:
            f.write(line + "\n")
    print("wrote %s: %d events" % (path, day.n_events))


if __name__ == "__main__":
    main()
