import Foundation
import Testing

/// Headless Chromium from Debian's `chromium`, installed by `Tools/setup.sh chromium` the first time a test needs
/// it. Where it cannot be installed (no package source, not root and no sudo), ``isAvailable`` is false and the
/// browser tests are skipped with ``unavailableReason``.
enum Chromium {
    static var isAvailable: Bool { executable != nil }

    static let unavailableReason: Comment = "Chromium is not installed and Tools/setup.sh chromium could not install it: the browser tests are skipped"

    static let executable = DebianPackage.program("chromium", at: ["/usr/bin/chromium", "/usr/bin/chromium-browser"])

    /// What one run of the browser left: its standard error (where it logs the page's console), and the DOM.
    struct Run {
        var status: Int32
        var dom: String
        var log: String

        /// The page's console messages (errors, warnings, logs), as Chromium logs them with `--enable-logging`.
        var consoleMessages: [String] { log.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init) }
    }

    /// Runs headless Chromium on `page` with `arguments` (`--screenshot=…`, `--print-to-pdf=…`, `--dump-dom`),
    /// in a profile of its own under `sandbox`, with no network to reach.
    static func run(_ page: String, _ arguments: [String], width: Int = 1280, height: Int = 2000, sandbox: Sandbox) throws -> Run {
        let browser = try #require(executable, unavailableReason)
        let profile = sandbox.path("chromium-profile-\(UUID().uuidString)")
        let flags = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=\(profile)", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
            "--enable-logging=stderr", "--v=0", "--window-size=\(width),\(height)", "--virtual-time-budget=5000",
            // Every host name resolves to nothing: a request the page made could reach no one.
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ]
        let run = try sandbox.run(flags + arguments + [URL(fileURLWithPath: page).absoluteString],
                                  killAfter: 120, program: URL(fileURLWithPath: browser))
        return Run(status: run.status, dom: run.out, log: run.err)
    }

    /// A copy of the report at `page` with a probe appended: a script that, once the page has loaded, writes what
    /// `probe` (a JavaScript expression) evaluates to, as JSON, into `<pre id="probe">`, for `--dump-dom` to carry
    /// out. The report's content security policy forbids every script, the probe's too, so the copy leaves it out:
    /// what the probe sees is what the markup alone does.
    static func probed(_ page: String, probe: String, sandbox: Sandbox) throws -> String {
        var html = try String(contentsOfFile: page, encoding: .utf8)
        let policy = try #require(html.range(of: #"<meta http-equiv="Content-Security-Policy"[^>]*>"#, options: .regularExpression))
        html.removeSubrange(policy)
        let script = """
            <script>
            window.__consoleErrors = [];
            window.addEventListener('load', () => {
              let result;
              try { result = (\(probe)); } catch (e) { result = { probeError: String(e) }; }
              const pre = document.createElement('pre');
              pre.id = 'probe';
              pre.textContent = JSON.stringify(result);
              document.body.appendChild(pre);
            });
            </script>
            """
        let end = try #require(html.range(of: "</body>", options: .backwards))
        html.replaceSubrange(end, with: script + "</body>")
        let copy = sandbox.path("probed-\(UUID().uuidString).html")
        try html.write(toFile: copy, atomically: true, encoding: .utf8)
        return copy
    }

    /// What the probe wrote, parsed.
    static func probeResult(_ run: Run) throws -> Any {
        let start = try #require(run.dom.range(of: "<pre id=\"probe\">"), "the probe wrote nothing: \(run.log.suffix(2000))")
        let rest = run.dom[start.upperBound...]
        let end = try #require(rest.range(of: "</pre>"))
        let text = String(rest[..<end.lowerBound])
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
        return try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }
}
