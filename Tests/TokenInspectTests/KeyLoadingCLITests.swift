import Foundation
import Testing

/// Key loading (docs/DESIGN.md#signatures-and-keys) as a user of the binary sees it: degenerate keys and
/// non-regular files exit 2 at once, key directories warn about what they
/// skip, and every file name printed is escaped.
@Suite struct KeyLoadingCLITests {
    static let fixtureKeys = "Tests/EntitlementTokensTests/Fixtures/Keys/"
    static let valid = "@Samples/tokens/valid.txt"

    /// The sample flags with `--key` pointing at `path` instead.
    static func sampleFlags(key path: String) -> [String] {
        var flags = CLI.sampleFlags
        flags[1] = path
        return flags
    }

    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tokeninspect-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func copy(_ relativePath: String, to url: URL) throws {
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent(relativePath), to: url)
    }

    // The time limits below guard against a hang, not for speed: in the whole suite on two
    // cores a limit's clock also counts the minute or more a test may wait for a thread.
    /// A FIFO with no writer: reading it would block forever.
    @Test(.timeLimit(.minutes(10)))
    func aFIFOAsKeyExitsTwoAtOnce() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("fifo")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        let started = Date()
        let result = try CLI.run(["verify", "--key", fifo.path, Self.valid])
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(fifo.path): is a FIFO (named pipe), not a regular file"))
        #expect(result.stdout.isEmpty)
        // A device too.
        let device = try CLI.run(["verify", "--key", "/dev/zero", Self.valid])
        #expect(device.status == 2)
        #expect(device.stderr.contains("character device"))
        // And mint's signing key.
        let mint = try CLI.run(["mint", "--key", fifo.path, "--requestor", "TNT", "--resource", "TNT"])
        #expect(mint.status == 2)
        #expect(mint.stderr.contains("\(fifo.path): is a FIFO"))
    }

    /// The review's reproducers: before, the first printed `#1 VALID_TOKEN`.
    @Test(
        "A forged token under a degenerate key: exit 2, never VALID",
        arguments: [
            ("test-degenerate-rsa2048-e1.pub.pem", "test-forged-rsa-e1.token", "e = 1 is below 3"),
            ("test-degenerate-ed25519-identity.pub.pem", "test-forged-ed25519-identity.token", "identity point"),
        ]
    )
    func forgeryUnderADegenerateKey(key: String, token: String, reason: String) throws {
        for extra in [[], ["--allow-insecure-keys"]] {
            let result = try CLI.run(
                [
                    "verify", "--key", Self.fixtureKeys + key, "--now", "2026-01-15T12:03:00Z",
                    "--requestor", "HBO", "--resource", "HBO",
                ] + extra + ["@" + Self.fixtureKeys + token]
            )
            #expect(result.status == 2)
            #expect(result.stderr.contains(Self.fixtureKeys + key))
            #expect(result.stderr.contains(reason))
            #expect(!result.stdout.contains("VALID_TOKEN"))
        }
        // The token itself is well-formed: a sound key calls it a bad signature.
        let sound = try CLI.run([
            "verify", "--key", "Samples/keys/trusted", "--now", "2026-01-15T12:03:00Z",
            "@" + Self.fixtureKeys + token,
        ])
        #expect(sound.status == 1)
        #expect(sound.stdout.contains("INVALID_SIGNATURE"))
    }

    /// The key directory of issue 15: a README, the private key, an old
    /// subdirectory beside the public keys.
    @Test(.timeLimit(.minutes(10)))
    func aKeyDirectoryWarnsAboutWhatItSkips() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["test-rsa2048.pub.pem", "test-rsa3072.pub.pem", "test-p256.pub.pem", "test-ed25519.pub.pem"] {
            try copy("Samples/keys/trusted/\(name)", to: directory.appendingPathComponent(name))
        }
        try Data("Public keys of the issuer. Rotate yearly.\n".utf8).write(to: directory.appendingPathComponent("README.md"))
        try copy("Samples/keys/test-rsa2048.pem", to: directory.appendingPathComponent("test-rsa2048.pem"))
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("old"), withIntermediateDirectories: false)
        try #require(mkfifo(directory.appendingPathComponent("pipe").path, 0o600) == 0)

        let result = try CLI.run(["verify"] + Self.sampleFlags(key: directory.path) + [Self.valid])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let path = directory.path
        #expect(
            lines.contains(
                "tokeninspect: warning: \(path)/README.md: skipped: holds no key (neither PEM (no \"-----BEGIN\" line) nor DER SubjectPublicKeyInfo, X.509 certificate or PKCS#1 RSA public key)"
            )
        )
        #expect(
            lines.contains {
                $0.hasPrefix("tokeninspect: warning: \(path)/test-rsa2048.pem: skipped: PEM \"PRIVATE KEY\" is a private key, never trusted")
            }
        )
        #expect(lines.contains("tokeninspect: note: \(path)/old: subdirectory not entered; only files directly in a key directory are loaded"))
        #expect(
            lines.contains("tokeninspect: warning: \(path)/pipe: skipped: is a FIFO (named pipe), not a regular file; refused without reading it")
        )
        // Sample keys copied out of Samples/keys: one warning each (docs/DESIGN.md#sample-keys).
        let sampleWarnings = lines.filter { $0.contains("is the repository's sample key") }
        #expect(sampleWarnings.count == 4, "\(lines)")
        #expect(lines.count - sampleWarnings.count == 4, "\(lines)")
        #expect(result.stdout.contains("VALID_TOKEN"))
    }

    @Test func aKeyDirectoryWithNoUsableKeyExitsTwo() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("notes\n".utf8).write(to: directory.appendingPathComponent("README"))
        try copy("Samples/keys/test-p256.pem", to: directory.appendingPathComponent("signing.pem"))
        let result = try CLI.run(["verify", "--key", directory.path, Self.valid])
        #expect(result.status == 2)
        #expect(result.stderr.contains("tokeninspect: error: \(directory.path): key directory yields no usable key"))
        #expect(result.stdout.isEmpty)
    }

    /// File names are chosen by whoever wrote the directory: control and
    /// bidi characters in them reach the terminal only as visible escapes.
    @Test func fileNamesAreEscaped() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try copy("Samples/keys/trusted/test-rsa2048.pub.pem", to: directory.appendingPathComponent("a.pem"))
        let hostile = "b\u{1B}[2J\u{1B}]52;c;aGk=\u{07}\u{202E}gnp\u{9B}\u{2028}.txt"
        try Data("not a key\n".utf8).write(to: directory.appendingPathComponent(hostile))
        let result = try CLI.run(["verify", "--list-keys"] + Self.sampleFlags(key: directory.path) + [Self.valid])
        #expect(result.status == 1)  // only one of the sample keys is trusted here
        #expect(result.stderr.contains("b\\x1b[2J\\x1b]52;c;aGk=\\x07\\u{202E}gnp\\u{9B}\\u{2028}.txt: skipped: holds no key"))
        for scalar in result.stderr.unicodeScalars {
            let value = scalar.value
            #expect(
                !(value < 0x20 && value != 0x0A) && !(0x7F...0x9F).contains(value) && value != 0x202E && value != 0x2028,
                "raw U+\(String(value, radix: 16)) on stderr"
            )
        }
        // The same for an error naming a file.
        let fifo = directory.appendingPathComponent("k\u{1B}[1A.pem")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        let refused = try CLI.run(["verify", "--key", fifo.path, Self.valid])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("k\\x1b[1A.pem: is a FIFO"))
        #expect(!refused.stderr.contains("\u{1B}"))
    }

    /// `--list-keys` says which keys were loaded, on stderr, so stdout stays
    /// the verdicts in every format.
    @Test func listKeys() throws {
        let result = try CLI.run(["verify", "--list-keys", "--format", "jsonl"] + CLI.sampleFlags + [Self.valid])
        #expect(result.status == 0)
        // (stderr also carries the run's summary line under jsonl)
        let lines = result.stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("tokeninspect: key ") }
        #expect(lines.count == 4, "\(result.stderr)")
        for (index, line) in lines.enumerated() {
            #expect(line.hasPrefix("tokeninspect: key \(index + 1) of 4: "))
            #expect(line.contains("key from Samples/keys/trusted/"))
            #expect(line.contains("(SHA-256 "))
        }
        #expect(lines.contains { $0.contains("Ed25519 Ed25519 key from Samples/keys/trusted/test-ed25519.pub.pem") })
        #expect(lines.contains { $0.contains("RSA-3072 SHA256withRSA key from Samples/keys/trusted/test-rsa3072.pub.pem") })
        #expect(try CLI.jsonLines(result.stdout).count > 0)
        // Without the flag, nothing is said about keys that loaded cleanly.
        let quiet = try CLI.run(["verify"] + CLI.sampleFlags + [Self.valid])
        #expect(quiet.stderr.isEmpty)
        // inspect takes it too, and shows a certificate's dates.
        let inspect = try CLI.run(["inspect", "--list-keys", "--key", "Samples/keys/test-rsa2048-cert.pem", Self.valid])
        #expect(inspect.stderr.contains("tokeninspect: key 1 of 1: RSA-2048 SHA256withRSA key from Samples/keys/test-rsa2048-cert.pem"))
        #expect(inspect.stderr.contains(", certificate valid "))
    }

    /// A certificate outside its dates still yields its key, with a warning
    /// (dates compared with --now).
    @Test func anExpiredCertificateWarnsAndStillVerifies() throws {
        let result = try CLI.run([
            "verify", "--key", "Samples/keys/test-rsa2048-cert.pem", "--now", "2200-01-01T00:00:00Z",
            "--leeway", "0", Self.valid,
        ])
        #expect(result.status != 2)
        #expect(result.stderr.contains("tokeninspect: warning: Samples/keys/test-rsa2048-cert.pem: certificate expired "))
        #expect(result.stderr.contains("its key is trusted anyway"))
        let early = try CLI.run(["verify", "--key", "Samples/keys/test-rsa2048-cert.pem", "--now", "2000-01-01T00:00:00Z", Self.valid])
        #expect(early.stderr.contains("tokeninspect: warning: Samples/keys/test-rsa2048-cert.pem: certificate not valid before "))
        let current = try CLI.run(["verify", "--key", "Samples/keys/test-rsa2048-cert.pem", "--now", "2100-01-01T00:00:00Z", Self.valid])
        #expect(!current.stderr.contains("certificate"))
    }
}
