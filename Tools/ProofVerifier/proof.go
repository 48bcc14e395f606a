package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// maxConsistencyHashes is the most consistency proof lines c2sp.org/tlog-witness
// allows in an add-checkpoint body.
const maxConsistencyHashes = 63

// An inclusionProof is a parsed c2sp.org/tlog-proof. Its checkpoint is not yet
// verified.
type inclusionProof struct {
	Extra      []byte // nil when the proof has no extra line
	Index      int64
	Hashes     tlog.RecordProof
	Checkpoint []byte // the signed note that follows the blank line
}

// A consistencyProof is a parsed c2sp.org/tlog-witness add-checkpoint body.
// Its checkpoint is not yet verified.
type consistencyProof struct {
	OldSize    int64
	Hashes     tlog.TreeProof
	Checkpoint []byte // the signed note that follows the blank line
}

// splitAtBlankLine splits data at its first blank line into the lines before
// it and the signed note after it.
func splitAtBlankLine(data []byte) (lines []string, rest []byte, ok bool) {
	i := bytes.Index(data, []byte("\n\n"))
	if i < 0 {
		return nil, nil, false
	}
	return strings.Split(string(data[:i]), "\n"), data[i+2:], true
}

// parseInclusionProof parses a c2sp.org/tlog-proof:
//
//	c2sp.org/tlog-proof@v1
//	extra BASE64        (optional)
//	index N
//	BASE64HASH          (zero or more, leaf's sibling first)
//
//	SIGNED CHECKPOINT
func parseInclusionProof(data []byte) (inclusionProof, error) {
	const header = "c2sp.org/tlog-proof@v1"
	lines, rest, ok := splitAtBlankLine(data)
	if !ok {
		return inclusionProof{}, errors.New("malformed tlog-proof: no blank line before the checkpoint")
	}
	if lines[0] != header {
		return inclusionProof{}, fmt.Errorf("malformed tlog-proof: the first line is not %q", header)
	}
	lines = lines[1:]

	var p inclusionProof
	if len(lines) > 0 && strings.HasPrefix(lines[0], "extra ") {
		extra, err := decodeCanonical(strings.TrimPrefix(lines[0], "extra "))
		if err != nil {
			return inclusionProof{}, fmt.Errorf("malformed tlog-proof: extra data: %v", err)
		}
		// Without extra data the line is omitted, so it is never empty.
		if len(extra) == 0 {
			return inclusionProof{}, errors.New("malformed tlog-proof: empty extra line")
		}
		p.Extra = extra
		lines = lines[1:]
	}

	if len(lines) == 0 || !strings.HasPrefix(lines[0], "index ") {
		return inclusionProof{}, errors.New("malformed tlog-proof: no \"index N\" line")
	}
	index, err := parseDecimal(strings.TrimPrefix(lines[0], "index "))
	if err != nil {
		return inclusionProof{}, fmt.Errorf("malformed tlog-proof: index: %v", err)
	}
	p.Index = index

	for i, line := range lines[1:] {
		h, err := decodeHash(line)
		if err != nil {
			return inclusionProof{}, fmt.Errorf("malformed tlog-proof: proof hash %d: %v", i+1, err)
		}
		p.Hashes = append(p.Hashes, h)
	}
	p.Checkpoint = rest
	return p, nil
}

// parseConsistencyProof parses a c2sp.org/tlog-witness add-checkpoint body:
//
//	old M
//	BASE64HASH          (zero to 63)
//
//	SIGNED CHECKPOINT
func parseConsistencyProof(data []byte) (consistencyProof, error) {
	lines, rest, ok := splitAtBlankLine(data)
	if !ok {
		return consistencyProof{}, errors.New("malformed consistency proof: no blank line before the checkpoint")
	}
	if !strings.HasPrefix(lines[0], "old ") {
		return consistencyProof{}, errors.New("malformed consistency proof: the first line is not \"old M\"")
	}
	oldSize, err := parseDecimal(strings.TrimPrefix(lines[0], "old "))
	if err != nil {
		return consistencyProof{}, fmt.Errorf("malformed consistency proof: old size: %v", err)
	}
	lines = lines[1:]
	if len(lines) > maxConsistencyHashes {
		return consistencyProof{}, fmt.Errorf("malformed consistency proof: %d hashes, more than %d", len(lines), maxConsistencyHashes)
	}

	p := consistencyProof{OldSize: oldSize, Checkpoint: rest}
	for i, line := range lines {
		h, err := decodeHash(line)
		if err != nil {
			return consistencyProof{}, fmt.Errorf("malformed consistency proof: proof hash %d: %v", i+1, err)
		}
		p.Hashes = append(p.Hashes, h)
	}
	return p, nil
}

// verifyInclusion checks that leaf is the entry at p.Index in the tree c
// commits to.
func verifyInclusion(p inclusionProof, c checkpoint, leaf []byte) error {
	if p.Index >= c.Size {
		return fmt.Errorf("inclusion proof does not verify: index %d is not less than the tree size %d", p.Index, c.Size)
	}
	if err := tlog.CheckRecord(p.Hashes, c.Size, c.Root, p.Index, tlog.RecordHash(leaf)); err != nil {
		return fmt.Errorf("inclusion proof does not verify: %v", err)
	}
	return nil
}

// verifyConsistency checks that the tree of newer contains the tree of older
// as a prefix.
//
// tlog.CheckTree requires 1 <= old size <= new size. With equal sizes it
// accepts exactly an empty proof and equal root hashes, which is RFC 9162's
// rule and tlog-witness's. It rejects an old size of 0 as invalid input, so
// that case is handled here: every tree extends the empty tree, and
// tlog-witness requires the proof to be empty.
func verifyConsistency(p consistencyProof, older, newer checkpoint) error {
	if older.Origin != newer.Origin {
		return fmt.Errorf("consistency proof does not verify: origins %q and %q differ", older.Origin, newer.Origin)
	}
	if p.OldSize != older.Size {
		return fmt.Errorf("consistency proof does not verify: old size %d is not the old checkpoint's size %d", p.OldSize, older.Size)
	}
	if older.Size > newer.Size {
		return fmt.Errorf("consistency proof does not verify: old size %d is larger than the new size %d", older.Size, newer.Size)
	}
	if older.Size == 0 {
		if len(p.Hashes) != 0 {
			return fmt.Errorf("consistency proof does not verify: a proof from size 0 must be empty, not %d hashes", len(p.Hashes))
		}
		return nil
	}
	if err := tlog.CheckTree(p.Hashes, newer.Size, newer.Root, older.Size, older.Root); err != nil {
		return fmt.Errorf("consistency proof does not verify: %v", err)
	}
	return nil
}
