// Command proof-verifier checks transparency-log checkpoints and Merkle proofs
// with Go's golang.org/x/mod/sumdb/note and golang.org/x/mod/sumdb/tlog, an
// implementation independent of the one that produced them.
//
// Usage:
//
//	proof-verifier note --vkey VKEYFILE NOTEFILE
//	proof-verifier inclusion --vkey VKEYFILE --leaf LEAFFILE PROOFFILE
//	proof-verifier consistency --vkey VKEYFILE --old OLDCHECKPOINTFILE PROOFFILE
//	proof-verifier batch LISTFILE
//
// VKEYFILE holds one verifier key, "NAME+KEYIDHEX8+BASE64(0x01 ‖ Ed25519 public
// key)", optionally followed by a newline.
//
// NOTEFILE and OLDCHECKPOINTFILE hold a checkpoint (c2sp.org/tlog-checkpoint):
// a signed note (c2sp.org/signed-note) whose text is exactly three lines,
// the origin (equal to the verifier key's name), the tree size in decimal and
// the base64 RFC 9162 root hash. Extension lines are rejected.
//
// For inclusion, PROOFFILE is a c2sp.org/tlog-proof and LEAFFILE holds the
// leaf's data; the leaf hash is SHA-256(0x00 ‖ data).
//
// For consistency, PROOFFILE is the body of a c2sp.org/tlog-witness
// add-checkpoint request: "old M", the consistency proof hashes, a blank line
// and the new checkpoint. M must be the old checkpoint's size.
//
// Every base64 string must be canonical standard base64 (RFC 4648 section 4,
// padded, unused bits zero), and every decimal number must have no sign and
// no leading zeros.
//
// batch runs many checks in one process: each line of LISTFILE is one of the
// commands above with its arguments separated by tabs ("note", VKEYFILE,
// NOTEFILE; "inclusion", VKEYFILE, LEAFFILE, PROOFFILE; "consistency",
// VKEYFILE, OLDCHECKPOINTFILE, PROOFFILE). It prints one line per check, in
// order: "ok: ..." or "rejected: " and the reason, and exits 0 once every
// line was checked, whatever the outcomes.
//
// On success the command prints one line starting with "ok:" and exits 0.
// When a check fails it prints one line on stderr saying what failed and
// exits 1. On a usage error or an unreadable file it exits 2.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

const (
	exitRejected = 1
	exitUsage    = 2
)

const usageText = `usage:
  proof-verifier note --vkey VKEYFILE NOTEFILE
  proof-verifier inclusion --vkey VKEYFILE --leaf LEAFFILE PROOFFILE
  proof-verifier consistency --vkey VKEYFILE --old OLDCHECKPOINTFILE PROOFFILE
  proof-verifier batch LISTFILE`

// usageError is returned for a command line that cannot be run or an input
// file that cannot be read; it exits with status 2 rather than 1, so that a
// typo in a test is not mistaken for a rejected proof.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	out, err := run(os.Args[1:])
	if err != nil {
		var usage usageError
		if errors.As(err, &usage) {
			fmt.Fprintln(os.Stderr, "proof-verifier: "+usage.msg)
			fmt.Fprintln(os.Stderr, usageText)
			os.Exit(exitUsage)
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(exitRejected)
	}
	fmt.Println(out)
}

// run executes one command and returns the line to print on success.
func run(args []string) (string, error) {
	if len(args) == 0 {
		return "", usageError{"no command"}
	}
	switch args[0] {
	case "note":
		return runNote(args[1:])
	case "inclusion":
		return runInclusion(args[1:])
	case "consistency":
		return runConsistency(args[1:])
	case "batch":
		return runBatch(args[1:])
	default:
		return "", usageError{fmt.Sprintf("unknown command %q", args[0])}
	}
}

// parseFlags parses the named string flags, all required, and exactly one
// positional argument. Both -flag and --flag are accepted.
func parseFlags(command string, args []string, names ...string) (map[string]string, string, error) {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	values := make(map[string]*string)
	for _, name := range names {
		values[name] = fs.String(name, "", "")
	}
	if err := fs.Parse(args); err != nil {
		return nil, "", usageError{command + ": " + err.Error()}
	}
	result := make(map[string]string)
	for _, name := range names {
		if *values[name] == "" {
			return nil, "", usageError{fmt.Sprintf("%s: --%s is required", command, name)}
		}
		result[name] = *values[name]
	}
	if fs.NArg() != 1 {
		return nil, "", usageError{command + ": expected exactly one file argument after the options"}
	}
	return result, fs.Arg(0), nil
}

func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return data, nil
}

// runNote verifies one signed checkpoint.
func runNote(args []string) (string, error) {
	flags, path, err := parseFlags("note", args, "vkey")
	if err != nil {
		return "", err
	}
	verifier, err := loadVerifier(flags["vkey"])
	if err != nil {
		return "", err
	}
	msg, err := readFile(path)
	if err != nil {
		return "", err
	}
	c, err := openCheckpoint(msg, verifier)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("ok: %s %d", c.Origin, c.Size), nil
}

// runInclusion verifies a tlog-proof for the leaf data in --leaf.
func runInclusion(args []string) (string, error) {
	flags, path, err := parseFlags("inclusion", args, "vkey", "leaf")
	if err != nil {
		return "", err
	}
	verifier, err := loadVerifier(flags["vkey"])
	if err != nil {
		return "", err
	}
	leaf, err := readFile(flags["leaf"])
	if err != nil {
		return "", err
	}
	data, err := readFile(path)
	if err != nil {
		return "", err
	}
	p, err := parseInclusionProof(data)
	if err != nil {
		return "", err
	}
	c, err := openCheckpoint(p.Checkpoint, verifier)
	if err != nil {
		return "", err
	}
	if err := verifyInclusion(p, c, leaf); err != nil {
		return "", err
	}
	return fmt.Sprintf("ok: index %d in size %d", p.Index, c.Size), nil
}

// runConsistency verifies an add-checkpoint body against the old checkpoint.
func runConsistency(args []string) (string, error) {
	flags, path, err := parseFlags("consistency", args, "vkey", "old")
	if err != nil {
		return "", err
	}
	verifier, err := loadVerifier(flags["vkey"])
	if err != nil {
		return "", err
	}
	oldMsg, err := readFile(flags["old"])
	if err != nil {
		return "", err
	}
	data, err := readFile(path)
	if err != nil {
		return "", err
	}
	oldCheckpoint, err := openCheckpoint(oldMsg, verifier)
	if err != nil {
		return "", fmt.Errorf("%w (old checkpoint)", err)
	}
	p, err := parseConsistencyProof(data)
	if err != nil {
		return "", err
	}
	newCheckpoint, err := openCheckpoint(p.Checkpoint, verifier)
	if err != nil {
		return "", fmt.Errorf("%w (new checkpoint)", err)
	}
	if err := verifyConsistency(p, oldCheckpoint, newCheckpoint); err != nil {
		return "", err
	}
	return fmt.Sprintf("ok: %d -> %d", oldCheckpoint.Size, newCheckpoint.Size), nil
}

// runBatch runs the checks listed in a file, one per line, and reports each.
func runBatch(args []string) (string, error) {
	if len(args) != 1 {
		return "", usageError{"batch: expected exactly one list file"}
	}
	list, err := readFile(args[0])
	if err != nil {
		return "", err
	}
	var report strings.Builder
	for number, line := range strings.Split(strings.TrimSuffix(string(list), "\n"), "\n") {
		fields := strings.Split(line, "\t")
		var checkArgs []string
		switch {
		case len(fields) == 3 && fields[0] == "note":
			checkArgs = []string{"note", "--vkey", fields[1], fields[2]}
		case len(fields) == 4 && fields[0] == "inclusion":
			checkArgs = []string{"inclusion", "--vkey", fields[1], "--leaf", fields[2], fields[3]}
		case len(fields) == 4 && fields[0] == "consistency":
			checkArgs = []string{"consistency", "--vkey", fields[1], "--old", fields[2], fields[3]}
		default:
			return "", usageError{fmt.Sprintf("batch: line %d is not a check", number+1)}
		}
		out, err := run(checkArgs)
		var usage usageError
		switch {
		case errors.As(err, &usage):
			return "", usageError{fmt.Sprintf("batch: line %d: %s", number+1, usage.msg)}
		case err != nil:
			report.WriteString("rejected: " + err.Error() + "\n")
		default:
			report.WriteString(out + "\n")
		}
	}
	return strings.TrimSuffix(report.String(), "\n"), nil
}
