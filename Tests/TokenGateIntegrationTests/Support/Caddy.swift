import Foundation

@testable import GateTestSupport

/// A real Caddy (Debian's `caddy`) for the forward_auth test: the shipped
/// `deploy/caddy/Caddyfile`, addresses substituted, in a temporary prefix
/// (no admin endpoint, no automatic HTTPS, storage in the prefix).
// Unchecked: one test owns it and uses it from its own task only.
final class Caddy: @unchecked Sendable {
    static let binary: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return (path.split(separator: ":").map { "\($0)/caddy" } + ["/usr/bin/caddy"])
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()
    static var available: Bool { binary != nil || Nginx.required }

    let prefix: URL
    let process: Process

    init(caddyfile: String, port: Int) throws {
        guard let binary = Self.binary else {
            throw RawHTTP.Failure(description: "caddy is required (TOKENINSPECT_INTEGRATION=require) but not installed: apt-get install caddy")
        }
        prefix = GateFixtures.temporaryDirectory()
        let file = prefix.appendingPathComponent("Caddyfile")
        try Data(caddyfile.replacingOccurrences(of: "{{prefix}}", with: prefix.path).utf8).write(to: file)
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["run", "--config", file.path, "--adapter", "caddyfile"]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = prefix.path
        environment["XDG_DATA_HOME"] = prefix.path
        environment["XDG_CONFIG_HOME"] = prefix.path
        process.environment = environment
        let log = FileHandle(forWritingAtPath: "/dev/null")
        process.standardOutput = log
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(15)
        while true {
            if let socket = try? RawHTTP.connect(port: port) {
                close(socket)
                return
            }
            guard process.isRunning, Date() < deadline else {
                stop()
                throw RawHTTP.Failure(description: "caddy did not start")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: prefix)
    }

    deinit { stop() }
}
