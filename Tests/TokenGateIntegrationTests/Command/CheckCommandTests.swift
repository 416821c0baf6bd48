import Foundation
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// `tokengate check` (docs/DESIGN.md#operators, docs/DEPLOY.md §6): the built
/// executable, as an operator runs it, against files made for each case. The
/// replay store's part against real Redis is in ``CheckReplayStoreTests``.
@Suite(.enabled(if: ExecutableTests.binary != nil, "the tokengate executable is not built"))
struct CheckCommandTests {
    /// Runs `tokengate check ARGUMENTS` to its end: its exit status and its
    /// standard output, then its standard error. `$CREDENTIALS_DIRECTORY` is
    /// unset unless `environment` sets it.
    static func check(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        let binary = try #require(ExecutableTests.binary)
        var inherited = ProcessInfo.processInfo.environment
        inherited["CREDENTIALS_DIRECTORY"] = nil
        let merged = inherited.merging(environment) { $1 }
        let result = try await offloaded { try Shell.run([binary.path, "check"] + arguments, environment: merged) }
        return (result.status, result.output)
    }

    /// A scratch folder: `keys/` with the given files of `Samples/keys`, and the named secret files.
    struct SetUp {
        let directory = GateFixtures.temporaryDirectory()
        var keys: URL { directory.appendingPathComponent("keys") }

        init(
            keys names: [String] = [
                "trusted/test-rsa2048.pub.pem", "trusted/test-rsa3072.pub.pem",
                "trusted/test-p256.pub.pem", "trusted/test-ed25519.pub.pem",
            ]
        ) throws {
            try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
            for name in names {
                try FileManager.default.copyItem(
                    at: GateFixtures.keys.appendingPathComponent(name),
                    to: keys.appendingPathComponent(URL(fileURLWithPath: name).lastPathComponent)
                )
            }
        }

        /// A secret file of `content`, with `mode`.
        func secret(_ name: String, _ content: String, mode: Int = 0o600) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            return path
        }

        var arguments: [String] { ["--key", keys.path, "--requestor", "TNT", "--resource-header", "X-Token-Resource"] }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// The fingerprint as the issuer's side computes it, with openssl (not the library under test).
    static func opensslFingerprint(_ path: String) throws -> String {
        let result = try MetricsAndDeployFilesTests.run("/bin/sh", ["-c", "openssl pkey -pubin -in '\(path)' -outform DER | sha256sum"])
        try #require(result.status == 0, "openssl: \(result.output)")
        return String(result.output.prefix(64))
    }

    /// The numbered list after "not ready to serve": each problem once.
    static func problemList(_ output: String) -> [String] {
        guard let start = output.range(of: "not ready to serve: ") else { return [] }
        return output[start.upperBound...].split(separator: "\n").dropFirst().map { String($0) }
    }

    @Test func aGoodSetUpExitsZeroAndListsEveryKeyWithItsFingerprintAlgorithmAndSize() async throws {
        let setUp = try SetUp()
        defer { setUp.remove() }
        let secretText = "a-session-secret-of-more-than-32-bytes-0123"
        let secret = try setUp.secret("session.key", secretText + "\n")
        let (status, output) = try await Self.check(setUp.arguments + ["--session-secret", secret])
        #expect(status == 0, "\(output)")
        #expect(output.contains("ready to serve: 0 problems, 4 warnings"), "\(output)")
        for (file, size) in [
            ("test-rsa2048.pub.pem", "RSA 2048 bits"), ("test-rsa3072.pub.pem", "RSA 3072 bits"),
            ("test-p256.pub.pem", "P-256"), ("test-ed25519.pub.pem", "Ed25519"),
        ] {
            let path = setUp.keys.appendingPathComponent(file).path
            let fingerprint = try Self.opensslFingerprint(path)
            let line = output.split(separator: "\n").first { $0.contains(path) }.map(String.init) ?? ""
            #expect(line.contains("sha256 \(fingerprint)") && line.contains("size \(size)"), "\(file): \(line)")
            // The repository's sample keys: a warning, in the words of the gate's start-up log.
            #expect(line.contains("WARNING") && line.contains("trusting a sample key of the tokeninspect repository"), "\(line)")
        }
        #expect(output.contains("\(secret): usable (bytes \(secretText.utf8.count + 1))"), "\(output)")
        #expect(!output.contains(secretText), "the secret itself was printed")
        #expect(output.contains("replay store (--replay)\n  note     memory: "), "\(output)")
    }

    @Test func theSettingsFileIsReadAsServeReadsIt() async throws {
        let setUp = try SetUp(keys: ["trusted/test-p256.pub.pem"])
        defer { setUp.remove() }
        let config = setUp.directory.appendingPathComponent("tokengate.conf")
        try "key = \(setUp.keys.path)\nrequestor = TNT\nresource = TNT\nsession-secret = session.key\n".write(
            to: config,
            atomically: true,
            encoding: .utf8
        )
        _ = try setUp.secret("session.key", String(repeating: "k", count: 40))
        // A relative secret is read under $CREDENTIALS_DIRECTORY, as the unit's gate reads it.
        let (status, output) = try await Self.check(
            ["--config", config.path, "--format", "json"],
            environment: ["CREDENTIALS_DIRECTORY": setUp.directory.path]
        )
        #expect(status == 0, "\(output)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        #expect(object["ready"] as? Bool == true && object["problems"] as? Int == 0 && object["warnings"] as? Int == 1)
        let sections = try #require(object["sections"] as? [[String: Any]])
        #expect(sections.compactMap { $0["name"] as? String } == ["settings", "keys", "session-secrets", "replay-store", "cdn-profiles", "cat-keys"])
        let keys = try #require(sections.first { $0["name"] as? String == "keys" }?["findings"] as? [[String: Any]])
        let facts = try #require(keys.first?["facts"] as? [String: String])
        #expect(facts["sha256"] == (try Self.opensslFingerprint(setUp.keys.appendingPathComponent("test-p256.pub.pem").path)))
        #expect(facts["algorithm"] == "SHA256withECDSA" && facts["size"] == "P-256")
        let secrets = try #require(sections.first { $0["name"] as? String == "session-secrets" }?["findings"] as? [[String: Any]])
        #expect(secrets.first?["subject"] as? String == setUp.directory.appendingPathComponent("session.key").path)
        #expect((secrets.first?["facts"] as? [String: String])?["bytes"] == "40")
    }

    @Test func aPrivateKeyInTheTrustFolderIsAProblemInTheWordsOfTheStartUpLog() async throws {
        let setUp = try SetUp(keys: ["trusted/test-rsa2048.pub.pem", "test-rsa2048.pem"])
        defer { setUp.remove() }
        let (status, output) = try await Self.check(setUp.arguments)
        #expect(status == 1, "\(output)")
        let problems = Self.problemList(output)
        let privateKey = setUp.keys.appendingPathComponent("test-rsa2048.pem").path
        #expect(
            problems.count == 1 && problems[0].hasPrefix("  1. \(privateKey): " + KeyNotices.headline(.privateKeySkipped).message),
            "\(output)"
        )
        #expect(output.contains("private key in the trust folder: skipped, move it out"))
    }

    @Test func aMissingAShortAndAnExposedSecretAreEachNamed() async throws {
        let setUp = try SetUp(keys: ["trusted/test-p256.pub.pem"])
        defer { setUp.remove() }
        let missing = setUp.directory.appendingPathComponent("no-such.key").path
        let short = try setUp.secret("short.key", "too-short\n")
        let exposed = try setUp.secret("exposed.key", String(repeating: "x", count: 48), mode: 0o644)
        let (status, output) = try await Self.check(
            setUp.arguments + [
                "--session-secret", missing, "--session-secret", short,
                "--session-secret", exposed,
            ]
        )
        #expect(status == 1, "\(output)")
        let problems = Self.problemList(output)
        #expect(problems.count == 3, "\(output)")
        #expect(problems.contains { $0.contains(missing) && $0.contains("not a readable regular file") }, "\(problems)")
        #expect(
            problems.contains { $0.contains(short) && $0.contains("holds 10 bytes, of which 9 are used") && $0.contains("at least 32") },
            "\(problems)"
        )
        #expect(problems.contains { $0.contains(exposed) && $0.contains("readable by others (mode 644)") }, "\(problems)")
        #expect(output.contains("not ready to serve: 3 problems"))
    }

    /// A secret readable by the gate's own group (Kubernetes' fsGroup on a
    /// Secret volume) is a warning; one its group shares with another group
    /// than the gate's, or others can read, stays a problem.
    @Test func aSecretReadableByTheGatesOwnGroupIsAWarning() async throws {
        let setUp = try SetUp(keys: ["trusted/test-p256.pub.pem"])
        defer { setUp.remove() }
        let grouped = try setUp.secret("grouped.key", String(repeating: "x", count: 48), mode: 0o440)
        let (status, output) = try await Self.check(setUp.arguments + ["--session-secret", grouped])
        #expect(status == 0, "\(output)")
        #expect(output.contains("readable by its group, the gate's own (mode 440)"), "\(output)")
        let others = try setUp.secret("others.key", String(repeating: "y", count: 48), mode: 0o444)
        let (refused, text) = try await Self.check(setUp.arguments + ["--session-secret", others])
        #expect(refused == 1, "\(text)")
        #expect(Self.problemList(text).contains { $0.contains(others) && $0.contains("readable by others (mode 444)") }, "\(text)")
    }

    @Test func severalProblemsAtOnceAreAllNamed() async throws {
        let setUp = try SetUp(keys: ["trusted/test-p256.pub.pem", "test-p256.pem"])
        defer { setUp.remove() }
        let short = try setUp.secret("short.key", "short")
        let port = try RawHTTP.freePort()
        let (status, output) = try await Self.check(setUp.arguments + ["--session-secret", short, "--replay", "redis://127.0.0.1:\(port)"])
        #expect(status == 1, "\(output)")
        let problems = Self.problemList(output)
        #expect(problems.count == 3, "\(output)")
        #expect(problems.contains { $0.contains("test-p256.pem: private key in the trust folder") }, "\(problems)")
        #expect(problems.contains { $0.contains(short) && $0.contains("at least 32") }, "\(problems)")
        // Named by mode and address, as /readyz names it, never by the networking library's words.
        #expect(problems.contains { $0.contains("redis 127.0.0.1:\(port): ") && $0.contains("connection refused") }, "\(problems)")
        #expect(!output.contains("NIO") && !output.contains("errno"), "\(output)")
    }

    @Test func optionsServeRefusesAreAUsageErrorWithServesWords() async throws {
        let setUp = try SetUp(keys: ["trusted/test-p256.pub.pem"])
        defer { setUp.remove() }
        let (status, output) = try await Self.check(["--key", setUp.keys.path, "--resource", "TNT"])
        #expect(status == 64, "\(output)")
        #expect(output.contains("no --requestor given"), "\(output)")
        let secretInURL = try await Self.check(setUp.arguments + ["--replay", "redis://:hunter2@127.0.0.1:6379"])
        #expect(secretInURL.status == 64 && !secretInURL.output.contains("hunter2"), "\(secretInURL.output)")
    }

    @Test func aHostileFileNameReachesTheTerminalEscaped() async throws {
        let setUp = try SetUp(keys: ["trusted/test-p256.pub.pem"])
        defer { setUp.remove() }
        let name = "readme\u{1b}]52;c;aGk=\u{07}\u{202E}.txt"
        try Data("not a key\n".utf8).write(to: setUp.keys.appendingPathComponent(name))
        let (status, output) = try await Self.check(setUp.arguments)
        #expect(status == 0, "\(output)")
        #expect(!output.unicodeScalars.contains { $0 == "\u{1b}" || $0 == "\u{07}" || $0 == "\u{202E}" }, "a control reached the terminal")
        #expect(output.contains("readme\\x1b]52;c;aGk=\\x07\\u{202E}.txt: key folder: file skipped"), "\(output)")
    }

    @Test func cdnProfilesAndCATKeysAreListedWithTheirFingerprints() async throws {
        let setUp = try SetUp(keys: ["trusted/test-p256.pub.pem"])
        defer { setUp.remove() }
        let secret = try setUp.secret("edge.secret", String(repeating: "e", count: 40) + "\n")
        let profile = setUp.directory.appendingPathComponent("edge.profile")
        try """
        name = edge
        kind = nginx-secure-link
        key = \(secret)
        secure-link-md5 = $secure_link_expires$folder $secret
        resource = TNT https://edge.example.test/hls/tnt/master.m3u8
        """.write(to: profile, atomically: true, encoding: .utf8)
        let hmac = CATGateFixtures.hmacPath
        let es256 = CATGateFixtures.es256Path
        let (status, output) = try await Self.check(
            setUp.arguments + [
                "--cdn-profile", profile.path,
                "--cat-key", "\(hmac) edge-1", "--cat-key", es256,
            ]
        )
        #expect(status == 0, "\(output)")
        let secretDigest = try MetricsAndDeployFilesTests.run("/bin/sh", ["-c", "printf %s '\(String(repeating: "e", count: 40))' | sha256sum"])
            .output.prefix(64)
        #expect(output.contains("\(profile.path): profile edge (kind nginx-secure-link)"), "\(output)")
        #expect(output.contains("\(profile.path): profile edge key (file \(secret), sha256 \(secretDigest))"), "\(output)")
        let esFingerprint = try MetricsAndDeployFilesTests.run("/bin/sh", ["-c", "openssl pkey -in '\(es256)' -pubout -outform DER | sha256sum"])
            .output.prefix(64)
        #expect(output.contains("\(es256): usable (kind ES256 (P-256) private key, sha256 \(esFingerprint))"), "\(output)")
        #expect(output.contains("\(hmac): usable (id edge-1, kind HMAC 256/256 secret, sha256 "), "\(output)")
        // A CAT key that is neither hex nor PEM, and a profile that is not there: both named.
        let missing = setUp.directory.appendingPathComponent("none").path
        let broken = try await Self.check(setUp.arguments + ["--cat-key", profile.path, "--cdn-profile", missing])
        let problems = Self.problemList(broken.output)
        #expect(broken.status == 1 && problems.count == 2, "\(broken.output)")
        #expect(problems.contains { $0.hasPrefix("  1. \(missing): ") || $0.hasPrefix("  2. \(missing): ") }, "\(problems)")
        #expect(problems.contains { $0.contains("\(profile.path): ") }, "\(problems)")
    }
}
