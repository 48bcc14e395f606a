package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// A checkpoint is the parsed text of a verified c2sp.org/tlog-checkpoint.
type checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
}

// loadVerifier reads a verifier key file: one key, optionally followed by a
// single newline.
func loadVerifier(path string) (note.Verifier, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	key := strings.TrimSuffix(string(data), "\n")
	// note.NewVerifier's base64 decoding skips CR and LF, so a key split over
	// lines would otherwise be accepted.
	if strings.ContainsAny(key, "\r\n") {
		return nil, errors.New("malformed verifier key: more than one line")
	}
	v, err := note.NewVerifier(key)
	if err != nil {
		return nil, fmt.Errorf("malformed verifier key: %v", err)
	}
	return v, nil
}

// openCheckpoint verifies the signed note msg with v and parses its text as a
// checkpoint whose origin is v's name.
func openCheckpoint(msg []byte, v note.Verifier) (checkpoint, error) {
	keyName := fmt.Sprintf("%s+%08x", v.Name(), v.KeyHash())
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		var invalid *note.InvalidSignatureError
		var unverified *note.UnverifiedNoteError
		switch {
		case errors.As(err, &invalid):
			return checkpoint{}, fmt.Errorf("bad signature: the signature by %s does not verify", keyName)
		case errors.As(err, &unverified):
			return checkpoint{}, fmt.Errorf("bad signature: no signature by %s", keyName)
		default:
			return checkpoint{}, fmt.Errorf("malformed signed note: %v", err)
		}
	}
	if err := checkKeySignatures(msg, n, v); err != nil {
		return checkpoint{}, err
	}

	lines := strings.Split(strings.TrimSuffix(n.Text, "\n"), "\n")
	if len(lines) != 3 {
		return checkpoint{}, fmt.Errorf("malformed checkpoint: the note text has %d lines, not 3", len(lines))
	}
	if lines[0] != v.Name() {
		return checkpoint{}, fmt.Errorf("malformed checkpoint: origin %q is not the verifier key's name %q", lines[0], v.Name())
	}
	size, err := parseDecimal(lines[1])
	if err != nil {
		return checkpoint{}, fmt.Errorf("malformed checkpoint: tree size: %v", err)
	}
	root, err := decodeHash(lines[2])
	if err != nil {
		return checkpoint{}, fmt.Errorf("malformed checkpoint: root hash: %v", err)
	}
	// RFC 9162 section 2.1.1: the hash of an empty tree is SHA-256 of the
	// empty string. (tlog.TreeHash(0) returns all zeros instead, the go.sum
	// database's convention, so tlog is not asked.)
	if size == 0 && root != tlog.Hash(sha256.Sum256(nil)) {
		return checkpoint{}, errors.New("malformed checkpoint: the root hash of an empty tree is not SHA-256 of the empty string")
	}
	return checkpoint{Origin: lines[0], Size: size, Root: root}, nil
}

// checkKeySignatures checks every signature line in msg made by v's key (name
// and key ID): each must be canonical base64 and must verify. note.Open
// verifies only the first signature by a key and skips repeats, and it
// decodes base64 leniently; c2sp.org/signed-note requires every signature
// from a known key to be verified.
func checkKeySignatures(msg []byte, n *note.Note, v note.Verifier) error {
	text := []byte(n.Text)
	if !bytes.HasPrefix(msg, text) {
		return errors.New("malformed signed note: text does not begin the note")
	}
	// note.Open splits the text from the signatures at the last blank line,
	// so the signature block follows the text and one newline.
	block := strings.TrimSuffix(string(msg[len(text)+1:]), "\n")
	for _, line := range strings.Split(block, "\n") {
		name, b64, _ := strings.Cut(strings.TrimPrefix(line, "— "), " ")
		sig, err := base64.StdEncoding.DecodeString(b64)
		if name != v.Name() || err != nil || len(sig) < 4 || binary.BigEndian.Uint32(sig) != v.KeyHash() {
			continue // another key's signature; note.Open has checked its syntax
		}
		if base64.StdEncoding.EncodeToString(sig) != b64 {
			return fmt.Errorf("malformed signed note: the signature by %s+%08x is not canonical base64", v.Name(), v.KeyHash())
		}
		single := n.Text + "\n" + line + "\n"
		if _, err := note.Open([]byte(single), note.VerifierList(v)); err != nil {
			return fmt.Errorf("bad signature: a repeated signature by %s+%08x does not verify", v.Name(), v.KeyHash())
		}
	}
	return nil
}

// parseDecimal parses a non-negative int64 written in ASCII decimal with no
// sign and no leading zeros ("0" itself is allowed).
func parseDecimal(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != s {
		return 0, fmt.Errorf("%q is not a canonical decimal number", s)
	}
	return n, nil
}

// decodeCanonical decodes standard padded base64, rejecting any encoding
// other than the one base64.StdEncoding produces for the same bytes (non-zero
// unused bits, embedded CR or LF).
func decodeCanonical(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || base64.StdEncoding.EncodeToString(b) != s {
		return nil, fmt.Errorf("%q is not canonical base64", s)
	}
	return b, nil
}

// decodeHash decodes a canonical base64 SHA-256 hash.
func decodeHash(s string) (tlog.Hash, error) {
	b, err := decodeCanonical(s)
	if err != nil {
		return tlog.Hash{}, err
	}
	if len(b) != tlog.HashSize {
		return tlog.Hash{}, fmt.Errorf("%q decodes to %d bytes, not %d", s, len(b), tlog.HashSize)
	}
	var h tlog.Hash
	copy(h[:], b)
	return h, nil
}
