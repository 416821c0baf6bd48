import EntitlementTokens
import Foundation
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The executable as an operator runs it: refusals at start, the config
/// file, a key rotation on SIGHUP, and SIGTERM.
@Suite(.serialized) struct ExecutableTests {
    static let binary: URL? = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            GateFixtures.repository.appendingPathComponent(".build/debug"),
        ]
        return candidates.map { $0.appendingPathComponent("tokengate") }.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Runs the executable to its end: its exit status and standard error.
    static func run(_ arguments: [String]) async throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try await offloaded { process.waitUntilExit() }
        return (process.terminationStatus, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    @Test(.enabled(if: binary != nil, "the tokengate executable is not built"))
    func refusesToStartWithoutARequestorAndExplainsWhy() async throws {
        let (status, text) = try await Self.run(["serve", "--key", GateFixtures.publicKey, "--resource", "TNT"])
        #expect(status == 64)
        #expect(text.contains("--requestor"))
    }

    @Test(.enabled(if: binary != nil, "the tokengate executable is not built"))
    func servesFromAConfigFileReloadsOnSIGHUPAndStopsOnSIGTERM() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyDirectory = directory.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keyDirectory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: GateFixtures.publicKey, toPath: keyDirectory.appendingPathComponent("a.pem").path)
        let port = try RawHTTP.freePort()
        let config = directory.appendingPathComponent("gate.conf")
        try Data(
            """
            # test settings
            key = \(keyDirectory.path)
            requestor = TNT
            resource = TNT
            listen = 127.0.0.1:\(port)
            log-format = json
            shutdown-grace = 0.2
            """.utf8
        ).write(to: config)
        let process = Process()
        process.executableURL = Self.binary
        // The token's issue time is 2016: this gate has the real clock, so only authorization tokens are
        // minted here with a fresh issue time.
        process.arguments = ["serve", "--config", config.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var ready = false
        for _ in 0..<100 {
            if let answer = try? await RawHTTP.fetch(port: port, "/readyz"), answer.status == 200 {
                ready = true
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(ready)

        func token(_ key: SigningKey) -> String {
            var request = MintRequest(kind: .authorization, requestorID: "TNT", resourceID: "TNT", issueTime: TokenTimestamp.now())
            request.ttlMilliseconds = 600_000
            request.encoding = .base64url
            return try! TokenMinter.mint(request, key: key)
        }
        let ours = try await RawHTTP.fetch(
            port: port,
            "/v1/auth-request",
            headers: [("X-Original-URI", "/a?token=\(token(GateFixtures.signingKey))")]
        )
        #expect(ours["X-Token-Status"] == "VALID_TOKEN")
        let theirs = try await RawHTTP.fetch(
            port: port,
            "/v1/auth-request",
            headers: [("X-Original-URI", "/a?token=\(token(GateFixtures.untrustedKey))")]
        )
        #expect(theirs["X-Token-Status"] == "INVALID_SIGNATURE")

        // Rotate: add the other issuer's key, then SIGHUP.
        try Data(GateFixtures.untrustedKey.publicKey.derRepresentation).write(to: keyDirectory.appendingPathComponent("b.der"))
        kill(process.processIdentifier, SIGHUP)
        var rotated = false
        for _ in 0..<50 {
            let answer = try await RawHTTP.fetch(
                port: port,
                "/v1/auth-request",
                headers: [("X-Original-URI", "/a?token=\(token(GateFixtures.untrustedKey))")]
            )
            if answer["X-Token-Status"] == "VALID_TOKEN" {
                rotated = true
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(rotated)
        let metrics = try await RawHTTP.fetch(port: port, "/metrics").body
        #expect(metrics.contains("tokengate_keys_loaded 2"))

        process.terminate()  // SIGTERM
        try await offloaded { process.waitUntilExit() }
        #expect(process.terminationReason == .exit)
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("\"message\":\"keys reloaded\""))
        #expect(log.contains("shutting down"))
        #expect(!log.contains(token(GateFixtures.signingKey).prefix(30)))
    }
}
