/// The two short programs an audit bundle holds, so that an auditor checks it with tools that are not
/// PermissionLedger's: Go's `golang.org/x/mod/sumdb/note` and `sumdb/tlog` (the libraries of Go's checksum
/// database) for the signature and every inclusion proof, and Python's standard library for what each leaf
/// commits to. Each is short enough to read before it is run.
enum BundleChecks {
    /// `check-proofs.go`: the checkpoint's signature, and each event's inclusion proof against it.
    static let proofs = #"""
    // check-proofs checks an audit bundle's signed checkpoint and every events/SEQ.proof (C2SP tlog-proof)
    // against it, with Go's golang.org/x/mod/sumdb/note and sumdb/tlog. Run it in the bundle's directory:
    //
    //	GOPATH=/usr/share/gocode GO111MODULE=off go run check-proofs.go
    package main

    import (
    	"bytes"
    	"encoding/base64"
    	"fmt"
    	"os"
    	"path/filepath"
    	"strconv"
    	"strings"

    	"golang.org/x/mod/sumdb/note"
    	"golang.org/x/mod/sumdb/tlog"
    )

    func fail(format string, args ...any) {
    	fmt.Fprintf(os.Stderr, "FAILED: "+format+"\n", args...)
    	os.Exit(1)
    }

    func read(name string) []byte {
    	data, err := os.ReadFile(name)
    	if err != nil {
    		fail("%v", err)
    	}
    	return data
    }

    func hash(text string) tlog.Hash {
    	raw, err := base64.StdEncoding.DecodeString(text)
    	if err != nil || len(raw) != 32 {
    		fail("%q is not a base64 hash", text)
    	}
    	var h tlog.Hash
    	copy(h[:], raw)
    	return h
    }

    func main() {
    	verifier, err := note.NewVerifier(strings.TrimSpace(string(read("vkey"))))
    	if err != nil {
    		fail("vkey: %v", err)
    	}
    	checkpoint := read("checkpoint")
    	signed, err := note.Open(checkpoint, note.VerifierList(verifier))
    	if err != nil {
    		fail("checkpoint: %v", err)
    	}
    	lines := strings.Split(signed.Text, "\n")
    	if len(lines) != 4 || lines[0] != verifier.Name() {
    		fail("checkpoint: not origin, size and root of %s", verifier.Name())
    	}
    	size, err := strconv.ParseInt(lines[1], 10, 64)
    	if err != nil {
    		fail("checkpoint: size %q", lines[1])
    	}
    	root := hash(lines[2])
    	proofs, _ := filepath.Glob("events/*.proof")
    	for _, name := range proofs {
    		seq, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(name), ".proof"), 10, 64)
    		if err != nil {
    			fail("%s: not named by a seq", name)
    		}
    		head, rest, found := bytes.Cut(read(name), []byte("\n\n"))
    		if !found || !bytes.Equal(rest, checkpoint) {
    			fail("%s: not a proof against this checkpoint", name)
    		}
    		lines := strings.Split(string(head), "\n")
    		if len(lines) < 2 || lines[0] != "c2sp.org/tlog-proof@v1" || lines[1] != "index "+strconv.FormatInt(seq-1, 10) {
    			fail("%s: not the tlog-proof of index %d", name, seq-1)
    		}
    		var proof tlog.RecordProof
    		for _, line := range lines[2:] {
    			proof = append(proof, hash(line))
    		}
    		leaf := read(strings.TrimSuffix(name, ".proof") + ".leaf")
    		if err := tlog.CheckRecord(proof, size, root, seq-1, tlog.RecordHash(leaf)); err != nil {
    			fail("%s: the leaf is not in the tree: %v", name, err)
    		}
    	}
    	fmt.Printf("ok: the checkpoint of %d events is signed by %s, and %d events are in its tree\n", size, verifier.Name(), len(proofs))
    }
    """#

    /// `check-leaves.py`: each event's readable line against its leaf, and that no event of the subject is missing
    /// between the first and the last.
    static let leaves = #"""
    #!/usr/bin/env python3
    """check-leaves: checks that each events/SEQ.json is what events/SEQ.leaf commits to (docs/STORAGE.md of
    PermissionLedger, "Leaf data"), personal fields through their commitment, and that each leaf names the
    subject's event before it, so that no event is missing between the first and the last. Python's standard
    library only. Run it in the bundle's directory: python3 check-leaves.py"""
    import glob, hashlib, hmac, json, os, sys

    CODES = {"namePrefix": 3, "givenName": 4, "middleName": 5, "familyName": 6, "nameSuffix": 7, "nickname": 8}

    def fail(message):
        sys.exit("FAILED: " + message)

    def text(code, value):
        data = value.encode("utf-8")
        length, varint = len(data), b""
        while True:
            byte, length = length & 0x7F, length >> 7
            varint += bytes([byte | (0x80 if length else 0)])
            if not length:
                return bytes([code]) + varint + data

    def personal(event):
        """The canonical bytes of the event's personal fields; and the event with each personal member removed."""
        out, kind = b"", event["type"]
        if kind == "question.asked":
            question = event["question"]
            for topic, body in question["topic"].items():
                if topic == "communication":
                    for person in body["people"]:
                        out += text(1, person["handle"].pop("value") or "")
                        person["handle"].pop("erased", None)
                        name = person.pop("name", None)
                        if name is not None:
                            out += text(2, "") + b"".join(text(CODES[k], name[k]) for k in CODES if k in name)
                else:
                    out += text(9, body.pop("description") or "")
                    body.pop("erased", None)
            for choice in question["choices"]:
                out += text(10, choice.pop("title") or "")
                choice.pop("erased", None)
        elif kind == "question.askFailed":
            if "message" in event["error"]:
                out += text(11, event["error"].pop("message") or "")
                event["error"].pop("erased", None)
        elif kind == "handles.observed":
            for handle in event["checked"] + event["known"]:
                out += text(1, handle.pop("value") or "")
                handle.pop("erased", None)
        return out, event

    previous, subject = None, None
    names = sorted(glob.glob("events/*.json"), key=lambda name: int(os.path.basename(name)[:-5]))
    for name in names:
        seq = int(os.path.basename(name)[:-5])
        event = json.loads(open(name, encoding="utf-8").read())
        leaf = json.loads(open(name[:-5] + ".leaf", "rb").read().decode("utf-8"))
        salt = event.pop("salt", None)
        erased_commitment = event.pop("commitment", None)
        event.pop("hash", None), event.pop("tokens", None)
        values, envelope = personal(event)
        if salt is not None:
            commitment = hmac.new(bytes.fromhex(salt), values, hashlib.sha256).hexdigest()
        else:
            commitment = erased_commitment  # erased: the values are gone, their commitment stays
        if leaf.pop("commitment", None) != commitment:
            fail(f"{name}: its personal fields are not what the leaf commits to")
        if leaf.pop("subjectPrevious", None) != previous:
            fail(f"{name}: the leaf names {previous} as the subject's event before it: an event is missing")
        if envelope != leaf or seq != event["seq"]:
            fail(f"{name}: the event is not the one its leaf holds")
        if subject not in (None, event["subject"]):
            fail(f"{name}: another subject's event")
        previous, subject = seq, event["subject"]
    print(f"ok: {len(names)} events of {subject} match their leaves, none missing from the first to the last")
    """#
}
