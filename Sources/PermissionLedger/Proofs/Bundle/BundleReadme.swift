import PermissionModel

/// The README of an audit bundle: what it holds, how to check it with third-party tools, and what it cannot prove.
package enum BundleReadme {
    /// The shell commands that check a bundle in `directory` with third-party tools, one a line; the directory as
    /// one word of the shell (``shellWord(_:)``).
    package static func checkCommands(directory: String) -> String {
        """
        sudo apt-get install golang-go golang-golang-x-mod-dev python3
        cd \(shellWord(directory))
        diff vkey TRUSTED-VKEY                                            # the key you were given by the operator
        GOPATH=/usr/share/gocode GO111MODULE=off go run check-proofs.go   # the signature, and every event in the tree
        python3 check-leaves.py                                           # every event is what its leaf commits to, none missing
        """
    }

    static func text(subject: String, checkpoint: Checkpoint, seqs: [UInt64]) -> String {
        """
        # Audit bundle: the events of one child

        This directory holds the \(seqs.count) events that the ledger \(codeSpan(checkpoint.origin)) recorded about the
        subject \(codeSpan(subject)), from its first (seq \(seqs.first!)) to its last (seq \(seqs.last!)) in a tree of
        \(checkpoint.size) events, and the proofs that they are exactly what the ledger recorded. It holds
        nothing of any other child: the proofs hold hashes only.

        | file | what it is |
        |---|---|
        | `vkey` | the ledger's verifier key (`ORIGIN+KEYID+KEY`); get it from the ledger's operator by a channel you trust, and compare |
        | `checkpoint` | the signed checkpoint (C2SP tlog-checkpoint, signed-note with Ed25519): origin, number of events, Merkle root (RFC 9162) |
        | `events/SEQ.json` | each event as the ledger exports it, with its personal values and their `salt` |
        | `events/SEQ.leaf` | the event's leaf in the Merkle tree: the event without its personal values, their commitment, and `subjectPrevious`, the seq of the child's event before it |
        | `events/SEQ.proof` | the event's inclusion proof (C2SP tlog-proof) against `checkpoint` |
        | `check-proofs.go`, `check-leaves.py` | the two checks below, short enough to read before you run them |

        ## How to check it

        On Debian or Ubuntu, with Go's own checksum-database libraries and Python:

        ```sh
        \(checkCommands(directory: "THIS-DIRECTORY"))
        ```

        Each check prints one line starting with `ok:`, or `FAILED:` and what failed. Any C2SP-compatible tool
        checks `checkpoint` and `events/*.proof` as well: the leaf hash is `SHA-256(0x00 ‖ SEQ.leaf)`, at index
        `SEQ − 1`.

        `check-proofs.go` opens `checkpoint` with `golang.org/x/mod/sumdb/note` and the key in `vkey`, and checks
        each proof with `tlog.CheckRecord`. `check-leaves.py` compares each event with its leaf after removing the
        personal values (a handle's `value`, a person's `name`, an update's `description`, a choice's `title`, an
        error's `message`), recomputes their commitment, HMAC-SHA256 keyed by the event's `salt` over their
        canonical bytes (each value as a one-byte field code, its UTF-8 length as a varint, its UTF-8), and checks
        that each leaf's `subjectPrevious` is the event before it in this bundle.

        ## What it proves, and what it cannot

        It proves that each event here is in the ledger's log at its seq, as the checkpoint signed by the ledger's
        key fixes it, with exactly these values; and that no event of this child is missing between the first and
        the last one here.

        It cannot prove:

        - that the ledger recorded no later event of this child: one after the last here, or after the checkpoint.
          Ask for a newer checkpoint and `permission-ledger prove-consistency` between the two: it proves the log
          only grew;
        - that the ledger shows everyone the same history: a ledger could sign a different log for another auditor.
          Comparing checkpoints with other auditors (or witnesses that cosign them) rules that out;
        - the values of events erased on a guardian's request: an erased event shows `null` values and its
          commitment, and still proves its place in the log, but its values cannot be checked, by design;
        - that what the app told the ledger was true: the ledger proves what it recorded, not the world.
        """ + "\n"
    }

    /// `value` as a CommonMark code span (CommonMark 0.31.2, 6.1): shown as the tool shows every value
    /// (``displayed(_:)``: control, format and bidi characters as `\u{XXXX}`, so it is one line), between backtick
    /// strings one longer than its longest run of backticks, so that none inside it ends the span; and with a space
    /// inside each end when it begins or ends with a backtick or a space, which CommonMark strips. Inside a code
    /// span nothing is Markdown or HTML: whatever a subject holds, the README shows it as text.
    static func codeSpan(_ value: String) -> String {
        let shown = displayed(value)
        var longest = 0
        var run = 0
        for byte in shown.utf8 {
            run = byte == UInt8(ascii: "`") ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = String(repeating: "`", count: longest + 1)
        let padded = shown.first == "`" || shown.last == "`" || (shown.first == " " && shown.last == " ")
        return padded ? fence + " " + shown + " " + fence : fence + shown + fence
    }

    /// `path` as one word of a POSIX shell: as it is when it holds only letters, digits and `/._+-`, which no shell
    /// gives a meaning, else between single quotes, each of its own single quotes written `'\''`. A directory named
    /// `x; rm -rf ~` is then a name to `cd` to when the commands are copied into a terminal, never a command; one
    /// that begins with `-` is written `./-…`, so that it is not taken for an option.
    static func shellWord(_ path: String) -> String {
        if path.hasPrefix("-") { return shellWord("./" + path) }
        let plain = !path.isEmpty && path.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "/._+-".unicodeScalars.contains($0))
        }
        return plain ? path : "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
