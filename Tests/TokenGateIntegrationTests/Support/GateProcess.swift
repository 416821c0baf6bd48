import Foundation
import IntegrationSupport

@testable import GateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A `tokengate serve` process, the built executable as an operator runs it,
/// on a free loopback port; its log goes to a file (a pipe nobody reads
/// would block it). Stopped with SIGTERM, then SIGKILL, by ``stop()`` or `deinit`.
final class GateProcess: @unchecked Sendable {
    /// `TOKENGATE_BINARY` when set (`Benchmarks/fleet` points it at a
    /// release build), otherwise the build the tests run from.
    static let binary: URL? =
        ProcessInfo.processInfo.environment["TOKENGATE_BINARY"].map { URL(fileURLWithPath: $0) }
        ?? ExecutableTests.binary

    let port: Int
    let process = Process()
    let logFile: URL

    /// Starts the gate with the test key, requestor and resource TNT, and
    /// `arguments`, on `port` (a free one when nil: a restarted gate takes
    /// its predecessor's); waits until `/healthz` answers (not `/readyz`: a
    /// gate whose Redis is down serves with readiness red). With `network`,
    /// the gate runs in its hub (`ip netns exec`, which execs it: the pid is
    /// the gate's), and the calling thread must have entered the hub too.
    /// With `clockOffset`, the gate's wall clock runs that many seconds off
    /// (libfaketime; its monotonic clock stays true).
    init(
        _ arguments: [String],
        port: Int? = nil,
        waitUntilServing: Bool = true,
        in network: NetworkNamespaces? = nil,
        clockOffset: Int? = nil
    ) throws {
        guard let binary = Self.binary else {
            throw RawHTTP.Failure(description: "the tokengate executable is not built (swift build --product tokengate)")
        }
        self.port = try port ?? RawHTTP.freePort()
        logFile = FileManager.default.temporaryDirectory.appendingPathComponent("tokengate-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)  // opened next, which throws if it is not there
        let serve =
            [
                "serve", "--key", GateFixtures.publicKey, "--requestor", "TNT", "--resource", "TNT",
                "--listen", "127.0.0.1:\(self.port)", "--log-format", "json", "--shutdown-grace", "0",
            ] + arguments
        if let network {
            process.executableURL = URL(fileURLWithPath: NetworkNamespaces.ip ?? "/usr/sbin/ip")
            process.arguments = ["netns", "exec", network.hub, binary.path] + serve
        } else if let clockOffset {
            // libfaketime 0.9.10 preloaded straight into the gate made it exit
            // at once, silently; through sh, which execs it (the pid is the
            // gate's), it runs.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "exec \"$0\" \"$@\"", binary.path] + serve
            process.environment = try Integration.skewedClock(by: clockOffset)
        } else {
            process.executableURL = binary
            process.arguments = serve
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: logFile)
        try process.run()
        guard waitUntilServing else { return }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if (try? RawHTTP.get(port: self.port, "/healthz"))?.status == 200 { return }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        let why = log
        stop()
        throw RawHTTP.Failure(description: "tokengate did not serve on \(self.port):\n\(why.suffix(2000))")
    }

    deinit { stop() }

    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Waits for the process to exit by itself, at most `seconds`; its status, or nil.
    func waitForExit(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        return process.isRunning ? nil : process.terminationStatus
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            if waitForExit(seconds: 5) == nil {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        try? FileManager.default.removeItem(at: logFile)
    }
}

/// Polls `condition` every 50 ms for at most `seconds`; whether it held, and when.
func eventually(within seconds: Double, _ condition: () throws -> Bool) -> (held: Bool, after: Double) {
    let start = Date()
    while true {
        if (try? condition()) == true { return (true, Date().timeIntervalSince(start)) }
        if Date().timeIntervalSince(start) > seconds { return (false, Date().timeIntervalSince(start)) }
        usleep(50_000)
    }
}
