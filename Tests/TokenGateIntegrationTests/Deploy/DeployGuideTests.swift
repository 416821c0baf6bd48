import Foundation
import Testing

@testable import GateTestSupport

/// The command blocks of docs/DEPLOY.md that an operator runs before and after
/// starting the service, run as written (their `/etc` paths, `systemctl` and
/// the site's address moved to a scratch folder, a `tokengate serve` process
/// and a real nginx with the shipped site on free loopback ports), with the
/// built `tokengate` and `tokeninspect` and the system's openssl and curl.
@Suite(
    .enabled(if: ExecutableTests.binary != nil, "the tokengate executable is not built"),
    .enabled(if: Nginx.available, "nginx is not installed (apt-get install nginx-light)")
)
struct DeployGuideTests {
    static let guide = GateFixtures.repository.appendingPathComponent("docs/DEPLOY.md")

    /// The first ```sh block after the line `heading`.
    static func block(after heading: String) throws -> String {
        let text = try String(contentsOf: guide, encoding: .utf8)
        let section = try #require(text.range(of: "\n\(heading)\n"), "docs/DEPLOY.md has no heading `\(heading)`")
        let rest = text[section.upperBound...]
        let open = try #require(rest.range(of: "```sh\n"))
        let close = try #require(rest[open.upperBound...].range(of: "\n```"))
        return String(rest[open.upperBound..<close.lowerBound])
    }

    /// `text` with each substitution made; throws when the guide no longer holds a line a substitution needs.
    static func substituted(_ text: String, _ substitutions: [(String, String)]) throws -> String {
        var result = text
        for (old, new) in substitutions {
            guard result.contains(old) else { throw RawHTTP.Failure(description: "the DEPLOY.md block no longer holds `\(old)`:\n\(text)") }
            result = result.replacingOccurrences(of: old, with: new)
        }
        return result
    }

    /// Runs `script` with `sh -e`, to its end.
    static func shell(_ script: String, environment: [String: String]) async throws -> Shell.Result {
        try await offloaded { try Shell.run(["/bin/sh", "-e", "-c", script], environment: environment) }
    }

    @Test func theCheckAndTheSmokeTestWithTheOperatorsOwnKeysRunAsWritten() async throws {
        let root = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let manager = FileManager.default
        // /etc/tokengate as §2 and §4 leave it: the issuer's key, a session secret, the shipped settings.
        let etc = root.appendingPathComponent("etc/tokengate")
        let keys = etc.appendingPathComponent("keys")
        try manager.createDirectory(at: keys, withIntermediateDirectories: true)
        try manager.copyItem(atPath: GateFixtures.publicKey, toPath: keys.appendingPathComponent("issuer-2026.pem").path)
        let secret = etc.appendingPathComponent("session.key")
        try Data(String(repeating: "q", count: 64).utf8).write(to: secret)
        try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secret.path)
        let gatePort = try RawHTTP.freePort()
        let shipped = try String(contentsOf: GateFixtures.repository.appendingPathComponent("deploy/tokengate.conf"), encoding: .utf8)
        let settings = try Self.substituted(
            shipped,
            [
                ("key = /etc/tokengate/keys", "key = \(keys.path)"),
                ("listen = 127.0.0.1:8089", "listen = 127.0.0.1:\(gatePort)"),
            ]
        )
        try Data(settings.utf8).write(to: etc.appendingPathComponent("tokengate.conf"))
        let bin = try #require(ExecutableTests.binary).deletingLastPathComponent().path
        let environment = ["PATH": "\(bin):/usr/bin:/bin", "HOME": root.path]

        // §6: the check before the service starts.
        let checkBlock = try Self.block(after: "## 6. systemd")
        let check = try Self.substituted(checkBlock, [("/etc/tokengate", etc.path)])
        let checked = try await Self.shell(check, environment: environment)
        #expect(checked.status == 0, "\(check)\n\(checked.output)")
        let issuer = keys.appendingPathComponent("issuer-2026.pem").path
        let fingerprint = try CheckCommandTests.opensslFingerprint(issuer)
        #expect(checked.output.contains(issuer) && checked.output.contains("sha256 \(fingerprint)"), "\(checked.output)")
        #expect(checked.output.contains("\(secret.path): usable (bytes 64)"), "\(checked.output)")

        // The service, as the unit starts it.
        let gate = Process()
        gate.executableURL = URL(fileURLWithPath: bin + "/tokengate")
        gate.arguments = ["serve", "--config", etc.appendingPathComponent("tokengate.conf").path]
        gate.environment = environment.merging(["CREDENTIALS_DIRECTORY": etc.path]) { $1 }
        let log = root.appendingPathComponent("gate.log")
        _ = manager.createFile(atPath: log.path, contents: nil)
        gate.standardInput = FileHandle.nullDevice
        gate.standardOutput = try FileHandle(forWritingTo: log)
        gate.standardError = try FileHandle(forWritingTo: log)
        try gate.run()
        defer {
            if gate.isRunning {
                gate.terminate()
                gate.waitUntilExit()
            }
        }
        let gateLog = { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        let serving = try await offloaded { eventually(within: 20) { try gate.isRunning && RawHTTP.get(port: gatePort, "/healthz").status == 200 } }
        try #require(serving.held, "the gate did not serve:\n\(gateLog().suffix(2000))")

        // The shipped nginx site in front of it, and an origin with the channel's playlist.
        let port = try RawHTTP.freePort()
        let originPort = try RawHTTP.freePort()
        let site = try ShippedNginxSite(gate: gatePort, origin: originPort, port: port)
        let http = site.http + "\nserver {\n    listen 127.0.0.1:\(originPort);\n    root {{prefix}}/www;\n}\n"
        let nginx = try await offloaded {
            try Nginx(http: http, port: port, files: ["hls/tnt/master.m3u8": "#EXTM3U\n"], configFiles: site.snippets)
        }
        defer { nginx.stop() }

        // The smoke test: a throw-away key of the operator's own, 200, then removed, 403.
        let smokeBlock = try Self.block(after: "### A smoke test with your own keys")
        let smoke = try Self.substituted(
            smokeBlock,
            [
                ("/etc/tokengate/keys/", keys.path + "/"),
                ("install -o root -g tokengate -m 0640", "install -m 0640"),
                ("systemctl reload tokengate", "kill -HUP \(gate.processIdentifier)"),
                ("http://127.0.0.1/", "http://127.0.0.1:\(port)/"),
            ]
        )
        let ran = try await Self.shell(smoke, environment: environment)
        #expect(ran.status == 0, "\(smoke)\n\(ran.output)")
        #expect(ran.stdout.split(separator: "\n") == ["200", "403"], "\(ran.output)\n\(nginx.errorLog)\n\(gateLog().suffix(3000))")
        #expect(try manager.contentsOfDirectory(atPath: keys.path) == ["issuer-2026.pem"], "the throw-away key was left behind")
        #expect(gateLog().contains("\"message\":\"keys reloaded\""))
    }
}
