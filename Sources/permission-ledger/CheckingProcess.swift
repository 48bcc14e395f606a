import ChildProcess
import Foundation
import PermissionLedger

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `verify` runs its check in a child process: the tool runs itself again with the hidden option
/// `--checking-process`. LMDB trusts the page numbers and lengths it finds in the data file, so a damaged
/// page can make it read outside the file and die of a signal; the parent then reports damage at the `seq`
/// the child was checking instead of dying itself.
///
/// How they talk:
/// - the child's standard output: one line of JSON, the outcome (a report, or why the ledger could not be read);
/// - descriptor 3: a shared page of a deleted temporary file where the child writes, for every event and
///   row, the stage and `seq` it is at, so that the parent knows where a crash happened at no cost to the check;
/// - the child's standard input: the read end of a pipe the parent never writes; the child exits when it
///   closes, so that it dies with the parent whatever killed the parent;
/// - the child's standard error is read and dropped (its text is not for the user).
///
/// The parent forwards SIGINT, SIGTERM and SIGHUP to the child and, once the child is gone, dies of the
/// same signal. A child that stops making progress for ten minutes is killed and reported as stuck.
enum CheckingProcess {
    /// What the check found, decoded from the child's line or made by the parent for a child that died.
    enum Outcome {
        /// The check ran to the end: intact, or damaged at `damagedSeq`.
        case report(events: UInt64, head: String, damagedSeq: UInt64?, problem: String?)
        /// The ledger could not be checked: a ``LedgerError``'s kind, message, `seq` and remedy.
        case failure(kind: LedgerError.Kind, message: String, seq: UInt64?, remedy: LedgerError.Remedy? = nil)
    }

    /// The hidden option that makes `verify` the child.
    static let option = "checking-process"
    /// The longest time, in seconds of the parent's clock while it runs, that the child may go without progress.
    static let stallLimit = 600

    // MARK: The shared progress page

    /// Layout: magic (8 bytes), seq (8), count of updates (8), stage length (4), pad (4), stage text (up to 224).
    fileprivate enum Page {
        static let size = 4096
        static let magic: UInt64 = 0x504C_5645_5249_4659 // "PLVERIFY"
        static let seq = 8, updates = 16, stageLength = 24, stage = 32, stageCapacity = 224
    }

    // MARK: Child

    /// Runs the check as the child: writes the outcome as one line on standard output and exits.
    static func runChild(path: String) -> Never {
        // A crash of the child is expected on a damaged file: no core file for it, and no line of its own (the
        // parent reports the signal it died of).
        disableCoreDumps()
        DamageReporting.stop()
        dieWithParent()
        let page = mapProgressPage()
        var lastStage: VerificationStage?
        var updates: UInt64 = 0
        let progress: VerificationProgress = { stage, seq in
            if let page {
                if stage != lastStage {
                    let text = Array(stage.description.utf8.prefix(Page.stageCapacity))
                    text.withUnsafeBytes { bytes in
                        if let source = bytes.baseAddress { page.advanced(by: Page.stage).copyMemory(from: source, byteCount: bytes.count) }
                    }
                    page.storeBytes(of: UInt32(text.count), toByteOffset: Page.stageLength, as: UInt32.self)
                    lastStage = stage
                }
                page.storeBytes(of: seq, toByteOffset: Page.seq, as: UInt64.self)
                updates &+= 1
                page.storeBytes(of: updates, toByteOffset: Page.updates, as: UInt64.self)
            }
        }
        var line: [String: Any]
        do {
            let report = try Ledger.verify(path: path, progress: progress)
            line = [
                "events": NSNumber(value: report.events), "head": "\(report.head)",
                "damagedSeq": report.damagedSeq.map { NSNumber(value: $0) } ?? NSNull(),
                "problem": report.problem ?? NSNull(),
            ]
        } catch {
            line = ["failure": name(of: error.kind), "message": error.message, "seq": error.seq.map { NSNumber(value: $0) } ?? NSNull()]
            if let remedy = error.remedy {
                switch remedy {
                case .verify(let path): line["verify"] = path
                case .rebuildProjections(let path): line["rebuildProjections"] = path
                case .readAgain: line["readAgain"] = true
                }
            }
        }
        var data = (try? JSONSerialization.data(withJSONObject: line, options: [.withoutEscapingSlashes])) ?? Data()
        data.append(0x0A)
        // The parent reads this line; if it cannot be written, the parent reports the child's silence.
        var out = Output()
        try? out.write(bytes: [UInt8](data))
        try? out.flush()
        exit(0)
    }

    /// Exits as soon as standard input, the parent's lifeline, closes.
    private static func dieWithParent() {
        let thread = Thread {
            var byte: UInt8 = 0
            while true {
                let count = read(STDIN_FILENO, &byte, 1)
                if count == 0 || (count < 0 && errno != EINTR) { _exit(3) }
            }
        }
        thread.start()
    }

    /// The parent's page on descriptor 3, if it is one.
    private static func mapProgressPage() -> UnsafeMutableRawPointer? {
        var status = stat()
        guard fstat(3, &status) == 0, Int(status.st_size) == Page.size else { return nil }
        guard let address = mmap(nil, Page.size, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0), address != MAP_FAILED else { return nil }
        guard address.load(as: UInt64.self) == Page.magic else {
            munmap(address, Page.size)
            return nil
        }
        return address
    }

    private static func name(of kind: LedgerError.Kind) -> String {
        switch kind {
        case .missing: "missing"
        case .notALedger: "notALedger"
        case .locked: "locked"
        case .damaged: "damaged"
        case .storage: "storage"
        case .notFound: "notFound"
        case .closed: "closed"
        case .readOnly: "readOnly"
        case .keyUnavailable: "keyUnavailable"
        }
    }

    private static func kind(named name: String) -> LedgerError.Kind? {
        [LedgerError.Kind.missing, .notALedger, .locked, .damaged, .storage, .notFound, .closed, .readOnly, .keyUnavailable].first { self.name(of: $0) == name }
    }

    // MARK: Parent

    /// Checks the ledger at `path` in a child process and returns what it found, or `nil` when no child
    /// could be started (the caller then checks in this process).
    static func check(path: String) -> Outcome? {
        guard let child = try? Child(path: path) else { return nil }
        return child.outcome()
    }

    /// A running child and the parent's ends of its pipes.
    private final class Child {
        let pid: pid_t
        let output: Int32
        let errors: Int32
        let lifeline: Int32
        let page: UnsafeMutableRawPointer?

        struct SpawnFailed: Error {}

        init(path: String) throws {
            let page = Self.makeProgressPage()
            var descriptors: [Int32] = []
            defer { for descriptor in descriptors { close(descriptor) } }
            func pipeEnds() throws -> (read: Int32, write: Int32) {
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else { throw SpawnFailed() }
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                return (ends[0], ends[1])
            }
            let out = try pipeEnds()
            let err = try pipeEnds()
            let life = try pipeEnds()
            descriptors = [out.write, err.write, life.read]
            if let page { descriptors.append(page.descriptor) }

            var fileActions: [FileAction] = [
                .duplicate(life.read, as: STDIN_FILENO), .duplicate(out.write, as: STDOUT_FILENO),
                .duplicate(err.write, as: STDERR_FILENO),
            ]
            if let page { fileActions.append(.duplicate(page.descriptor, as: 3)) }
            let arguments = [CommandLine.arguments.first ?? "permission-ledger", "verify", "--\(CheckingProcess.option)", "--ledger=\(path)"]
            var environment = ProcessInfo.processInfo.environment
            // The Swift runtime's crash report would be slow and is not for the user.
            environment["SWIFT_BACKTRACE"] = "enable=no"
            let request = SpawnRequest(
                executable: .own(fallbackName: "permission-ledger"), arguments: arguments, environment: environment,
                fileActions: fileActions,
                // The child dies of a fault whatever this process did with those signals, and has nothing blocked.
                // Termination signals this process ignores (a background job's SIGINT, nohup's SIGHUP) stay ignored.
                signalDefaults: [SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGTRAP, SIGFPE, SIGSYS, SIGPIPE], signalMask: [])
            guard let pid = try? request.spawn() else {
                for descriptor in [out.read, err.read, life.write] { close(descriptor) }
                if let page { munmap(page.address, Page.size) }
                throw SpawnFailed()
            }
            self.pid = pid
            output = out.read
            errors = err.read
            lifeline = life.write
            self.page = page?.address
        }

        deinit {
            for descriptor in [output, errors, lifeline] { close(descriptor) }
            if let page { munmap(page, Page.size) }
        }

        /// A page of a temporary file, deleted at once, shared with the child as descriptor 3.
        private static func makeProgressPage() -> (descriptor: Int32, address: UnsafeMutableRawPointer)? {
            for directory in [FileManager.default.temporaryDirectory.path, "/dev/shm", "/tmp"] {
                var template = Array("\(directory)/permission-ledger-verify-XXXXXX".utf8CString)
                let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
                guard descriptor >= 0 else { continue }
                template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
                guard ftruncate(descriptor, off_t(Page.size)) == 0,
                    let address = mmap(nil, Page.size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), address != MAP_FAILED
                else {
                    close(descriptor)
                    continue
                }
                address.storeBytes(of: Page.magic, as: UInt64.self)
                return (descriptor, address)
            }
            return nil
        }

        /// Waits for the child, reading its output, forwarding termination signals and watching its progress;
        /// `nil` when the child exited without checking anything (it could not run).
        func outcome() -> Outcome? {
            SignalForwarding.start(child: pid)
            var stdout = Data()
            var stderr = Data()
            var open = [output, errors]
            var stalledTicks = 0
            var lastUpdates: UInt64 = 0
            var stalled = false
            var buffer = [UInt8](repeating: 0, count: 65536)
            while !open.isEmpty {
                var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                let ready = poll(&fds, nfds_t(fds.count), 1000)
                if ready < 0 {
                    if errno == EINTR { continue }
                    break
                }
                if ready == 0 {
                    let updates = page?.load(fromByteOffset: Page.updates, as: UInt64.self) ?? 0
                    if updates != lastUpdates {
                        lastUpdates = updates
                        stalledTicks = 0
                    } else {
                        stalledTicks += 1
                        if stalledTicks >= CheckingProcess.stallLimit && !stalled {
                            stalled = true
                            kill(pid, SIGKILL)
                        }
                    }
                    continue
                }
                for fd in fds where fd.revents != 0 {
                    let count = buffer.withUnsafeMutableBytes { read(fd.fd, $0.baseAddress, $0.count) }
                    if count > 0 {
                        if fd.fd == output {
                            if stdout.count < 1 << 20 { stdout.append(contentsOf: buffer[0..<count]) }
                        } else if stderr.count < 1 << 16 {
                            stderr.append(contentsOf: buffer[0..<count])
                        }
                    } else if count == 0 || errno != EINTR {
                        open.removeAll { $0 == fd.fd }
                    }
                }
            }
            let termination = Termination.wait(for: pid)
            let forwarded = SignalForwarding.stop()
            let (signal, exitCode): (Int32, Int32) =
                switch termination {
                case .exited(let status): (0, status)
                case .killed(let signal): (signal, 0)
                }

            if signal != 0, let forwarded {
                // Interrupted: die as the user asked, as a tool without a child would.
                Foundation.signal(forwarded, SIG_DFL)
                kill(getpid(), forwarded)
            }
            if signal == 0, exitCode == 0, let outcome = Self.decode(stdout) { return outcome }
            let seq = page?.load(fromByteOffset: Page.seq, as: UInt64.self) ?? 0
            let updates = page?.load(fromByteOffset: Page.updates, as: UInt64.self) ?? 0
            let stage = page.map { page in
                let length = min(Int(page.load(fromByteOffset: Page.stageLength, as: UInt32.self)), Page.stageCapacity)
                return String(decoding: UnsafeRawBufferPointer(start: page + Page.stage, count: length), as: UTF8.self)
            } ?? ""
            let place = stage.isEmpty ? "" : " while checking \(stage)"
            let why: String
            if stalled {
                why = "the check made no progress for \(CheckingProcess.stallLimit / 60) minutes\(place) and was stopped: the data file is damaged so that LMDB goes round in circles"
            } else if signal != 0 {
                why = "the check's process died of \(Self.describe(signal))\(place): the data file is damaged so that LMDB cannot read it safely"
            } else {
                why = "the check's process exited with status \(exitCode) without a report\(place)"
            }
            return .failure(kind: .damaged, message: why, seq: max(seq, 1))
                .unlessNeverStarted(updates == 0 && signal == 0 && !stalled)
        }

        private static func describe(_ signal: Int32) -> String {
            let names: [Int32: String] = [
                SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGABRT: "SIGABRT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
                SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGHUP: "SIGHUP", SIGSYS: "SIGSYS",
            ]
            let name = names[signal] ?? "signal \(signal)"
            guard let text = strsignal(signal) else { return name }
            return "\(name) (\(String(cString: text).lowercased()))"
        }

        private static func decode(_ data: Data) -> Outcome? {
            guard let line = data.split(separator: 0x0A).last,
                let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
            else { return nil }
            func number(_ key: String) -> UInt64? { (object[key] as? NSNumber)?.uint64Value }
            if let failure = object["failure"] as? String, let kind = CheckingProcess.kind(named: failure) {
                let remedy: LedgerError.Remedy? =
                    if let path = object["verify"] as? String { .verify(path: path) }
                    else if let path = object["rebuildProjections"] as? String { .rebuildProjections(path: path) }
                    else if object["readAgain"] as? Bool == true { .readAgain }
                    else { nil }
                return .failure(kind: kind, message: object["message"] as? String ?? "", seq: number("seq"), remedy: remedy)
            }
            guard let events = number("events"), let head = object["head"] as? String else { return nil }
            return .report(events: events, head: head, damagedSeq: number("damagedSeq"), problem: object["problem"] as? String)
        }
    }
}

extension CheckingProcess.Outcome {
    /// `nil` when the child never got to check anything (it could not start): the caller checks in-process.
    fileprivate func unlessNeverStarted(_ neverStarted: Bool) -> Self? { neverStarted ? nil : self }
}
