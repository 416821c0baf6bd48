import Foundation
import IntegrationSupport

@testable import GateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// mitmproxy's `mitmdump` as a support engineer runs it to capture a
/// viewer's session (docs/HAR.md, "An app or a TV device"): an HTTP proxy
/// (forward, or reverse in front of one site) that writes every exchange to
/// a HAR with its `hardump` option when it exits. It lives in a virtual
/// environment of its own (it pins an older `cryptography` than the CDN
/// oracles of the shared test venv), which `scripts/test` makes and names in
/// `TOKENINSPECT_MITMDUMP`.
///
/// Started on a free loopback port with a throw-away configuration
/// directory; ``stop()`` sends SIGTERM, on which mitmdump writes the HAR and
/// exits (SIGKILL after 20 s, and then there is no HAR).
final class MitmDump: @unchecked Sendable {
    /// `$TOKENINSPECT_MITMDUMP`, else `bin/mitmdump` of `$TOKENINSPECT_MITMPROXY_VENV`
    /// or of `~/.cache/tokeninspect-mitmproxy-venv` (where `scripts/test` installs it).
    static let binary: String? = {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [String] = []
        if let path = environment["TOKENINSPECT_MITMDUMP"], !path.isEmpty { candidates.append(path) }
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.cache")
        let venv = environment["TOKENINSPECT_MITMPROXY_VENV"].flatMap { $0.isEmpty ? nil : $0 } ?? (cache + "/tokeninspect-mitmproxy-venv")
        candidates.append(venv + "/bin/mitmdump")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static var available: Bool { binary != nil || Integration.required }

    /// How the proxy stands: as the client's proxy, or in front of one site.
    enum Mode {
        case forward
        case reverse(to: String)
    }

    let port: Int
    let har: URL
    let process = Process()
    private let directory: URL
    private let logFile: URL

    /// `directory`: where the HAR, the configuration and the log go (removed by the caller).
    /// `clockOffset`: the capturing device's wall clock that many seconds off (libfaketime):
    /// mitmdump's clock is the one the HAR's `startedDateTime` are read from.
    init(_ mode: Mode, directory: URL, name: String, clockOffset: Int? = nil) throws {
        guard let binary = Self.binary else {
            throw RawHTTP.Failure(
                description: "mitmdump is required (TOKENINSPECT_INTEGRATION=require) but not found: scripts/test installs PyPI's mitmproxy "
                    + "into ~/.cache/tokeninspect-mitmproxy-venv, or set TOKENINSPECT_MITMDUMP"
            )
        }
        self.directory = directory.appendingPathComponent("mitmproxy-\(name)")
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        port = try RawHTTP.freePort()
        har = self.directory.appendingPathComponent("\(name).har")
        logFile = self.directory.appendingPathComponent("mitmdump.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)  // opened next, which throws if it is not there
        // Names under .test are the test's own hosts, all on loopback: the proxy
        // connects there without asking a resolver (the HAR keeps the names).
        // Started from the test process, mitmdump did not act on SIGTERM (its children
        // inherit a mask that blocks it) and wrote no HAR: the addon unblocks it as it loads.
        let addon = self.directory.appendingPathComponent("loopback_names.py")
        try Data(
            """
            import signal

            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})


            def server_connect(data):
                host, port = data.server.address
                if host.endswith(".test"):
                    data.server.address = ("127.0.0.1", port)

            """.utf8
        ).write(to: addon)
        var arguments = [
            "--listen-host", "127.0.0.1", "--listen-port", String(port),
            "--set", "confdir=\(self.directory.path)/conf",
            "--set", "hardump=\(har.path)",
            "-s", addon.path,
        ]
        if case .reverse(let target) = mode { arguments += ["--mode", "reverse:\(target)"] }
        if let clockOffset {
            process.environment = try Integration.skewedClock(by: clockOffset)
        }
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: logFile)
        process.standardError = process.standardOutput
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let socket = try? RawHTTP.connect(port: port) {
                close(socket)
                return
            }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        let why = log
        stop()
        throw RawHTTP.Failure(description: "mitmdump did not listen on \(port):\n\(why.suffix(2000))")
    }

    deinit { stop() }

    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Stops mitmdump by its pid (SIGTERM: it writes the HAR, then exits) and
    /// returns the HAR's bytes, or throws with its log when there is none.
    @discardableResult
    func finish() throws -> Data {
        stop()
        guard let data = try? Data(contentsOf: har), !data.isEmpty else {
            throw RawHTTP.Failure(description: "mitmdump wrote no HAR at \(har.path):\n\(log.suffix(2000))")
        }
        return data
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
