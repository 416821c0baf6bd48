import EntitlementTokens
import Foundation
import Testing

/// The programmer's private key (docs/DESIGN.md#key-passwords) from every form it is kept in, made
/// here by the `openssl` CLI (an implementation we did not write), and the
/// password sources.
@Suite("Programmer private key: PEM, DER, encrypted PEM, PKCS#12, passwords")
struct ProgrammerKeyTests {
    typealias F = SignatureFixtures
    static let password = "s3cret pass"

    /// Runs openssl with the fixture key in a fresh directory; returns the file it wrote.
    func made(_ name: String, _ arguments: (_ key: String, _ out: String) -> [String]) throws -> (bytes: [UInt8], directory: URL) {
        let directory = try F.temporaryDirectory()
        let out = directory.appendingPathComponent(name).path
        let result = try F.openssl(arguments(F.path("test-rsa2048.pem"), out))
        try #require(result.status == 0, "\(result.errorText)")
        return (Array(try Data(contentsOf: URL(fileURLWithPath: out))), directory)
    }

    func expectSameKey(_ key: ProgrammerPrivateKey) throws {
        let expected = try PublicKey.keys(from: F.bytes("test-rsa2048.pub.pem"), source: "pub").first
        #expect(key.publicKey == expected)
        #expect(key.bits == 2048)
    }

    @Test("plain PEM and DER read without a password")
    func plain() throws {
        try expectSameKey(try ProgrammerPrivateKey(bytes: F.bytes("test-rsa2048.pem"), source: "k"))
        let der = try made("k.der") { ["pkey", "-in", $0, "-outform", "DER", "-out", $1] }
        defer { F.removeTemporary(der.directory) }
        let key = try ProgrammerPrivateKey(bytes: der.bytes, source: "k.der")
        #expect(key.container == "DER")
        try expectSameKey(key)
    }

    @Test("encrypted PEM: traditional (genrsa -des3) and PKCS#8; a wrong password is refused")
    func encryptedPEM() throws {
        for (name, arguments) in [
            (
                "des3.pem",
                { (key: String, out: String) in ["rsa", "-in", key, "-des3", "-traditional", "-passout", "pass:\(Self.password)", "-out", out] }
            ),
            (
                "pkcs8.pem",
                { (key: String, out: String) in
                    ["pkcs8", "-topk8", "-in", key, "-v2", "aes-256-cbc", "-passout", "pass:\(Self.password)", "-out", out]
                }
            ),
        ] as [(String, (String, String) -> [String])] {
            let file = try made(name, arguments)
            defer { F.removeTemporary(file.directory) }
            let key = try ProgrammerPrivateKey(bytes: file.bytes, source: name, password: KeyPassword(Self.password, origin: "test"))
            #expect(key.container == "encrypted PEM")
            try expectSameKey(key)
            #expect(throws: KeyError(code: .unsupportedFormat, source: name, message: "")) {
                try ProgrammerPrivateKey(bytes: file.bytes, source: name, password: KeyPassword("wrong", origin: "test"))
            }
            #expect(throws: KeyError(code: .unsupportedFormat, source: name, message: ""), "the empty password never falls back to a prompt") {
                try ProgrammerPrivateKey(bytes: file.bytes, source: name)
            }
        }
    }

    @Test("PKCS#12: modern (AES), legacy RC2-40 through the legacy provider, empty password; a wrong password is refused")
    func pkcs12() throws {
        let certificate = F.path("test-rsa2048-cert.pem")
        let cases: [(String, String, [String])] = [
            ("modern.p12", Self.password, []),
            ("legacy.pfx", Self.password, ["-legacy"]),
            ("empty.p12", "", []),
        ]
        for (name, password, extra) in cases {
            let file = try made(name) { key, out in
                ["pkcs12", "-export", "-inkey", key, "-in", certificate, "-passout", "pass:\(password)", "-out", out] + extra
            }
            defer { F.removeTemporary(file.directory) }
            let key = try ProgrammerPrivateKey(bytes: file.bytes, source: name, password: KeyPassword(password, origin: "test"))
            #expect(key.container == "PKCS#12")
            try expectSameKey(key)
            #expect(throws: KeyError(code: .unsupportedFormat, source: name, message: "")) {
                try ProgrammerPrivateKey(bytes: file.bytes, source: name, password: KeyPassword("wrong", origin: "test"))
            }
        }
    }

    @Test("a public key, an EC key and garbage are refused with typed errors")
    func refusals() throws {
        #expect(throws: KeyError(code: .notAPrivateKey, source: "p", message: "")) {
            try ProgrammerPrivateKey(bytes: F.bytes("test-rsa2048.pub.pem"), source: "p")
        }
        #expect(throws: KeyError(code: .unsupportedKeyType, source: "p", message: "")) {
            try ProgrammerPrivateKey(bytes: F.bytes("test-p256.pem"), source: "p")
        }
        #expect(throws: KeyError(code: .unsupportedFormat, source: "p", message: "")) {
            try ProgrammerPrivateKey(bytes: Array("not a key".utf8), source: "p")
        }
    }

    @Test("passwords: the file's first line, else the environment, else the prompt, else empty")
    func passwordSources() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let file = directory.appendingPathComponent("pw.txt")
        try F.write(Array("from file\r\nsecond line\n".utf8), to: file)
        let environment = [KeyPassword.environmentVariable: "from env"]
        #expect(try KeyPassword.resolve(file: file.path, environment: environment, prompt: { "typed" }).bytes == Array("from file".utf8))
        #expect(try KeyPassword.resolve(file: nil, environment: environment, prompt: { "typed" }).bytes == Array("from env".utf8))
        #expect(try KeyPassword.resolve(file: nil, environment: [:], prompt: { "typed" }).bytes == Array("typed".utf8))
        #expect(try KeyPassword.resolve(file: nil, environment: [:], prompt: nil) == .empty)
        #expect(!"\(try KeyPassword.resolve(file: nil, environment: environment))".contains("from env"), "never shown")
        let missing = directory.appendingPathComponent("missing").path
        #expect(throws: KeyError(code: .unreadable, source: missing, message: "")) {
            try KeyPassword.resolve(file: missing, environment: [:])
        }
    }
}

/// Signed requestor IDs (docs/DESIGN.md#signed-requestor-ids) verified against the programmer's public key
/// and the expected requestor; cross-checked with `openssl dgst`.
@Suite("Signed requestor ID verification")
struct SignedRequestorIDVerificationTests {
    typealias F = SignatureFixtures

    static func ring(_ names: String...) throws -> KeyRing {
        KeyRing(try names.flatMap { try PublicKey.keys(from: F.bytes($0), source: $0) })
    }

    @Test("SHA-256 (default) and SHA-1 signatures verify; a wrong requestor, digest or key does not")
    func verification() throws {
        let key = try ProgrammerPrivateKey(bytes: F.bytes("test-rsa2048.pem"), source: "k")
        let ring = try Self.ring("test-rsa2048-b.pub.pem", "test-rsa2048.pub.pem")
        for digest in RequestorIDDigest.allCases {
            let id = try key.signRequestorID("nbcentertainment", digest: digest)
            let reread = try SignedRequestorID(base64: Array(id.base64.utf8))
            let verifier = SignedRequestorIDVerifier(ring: ring, digest: digest)
            let valid = verifier.verify(reread, requestor: "nbcentertainment")
            #expect(valid.status == .validToken, "\(valid.reason)")
            #expect(valid.verified?.key.source == "test-rsa2048.pub.pem")
            let wrongRequestor = verifier.verify(reread, requestor: "nbcentertainmenT")
            #expect(wrongRequestor.status == .invalidSignature && wrongRequestor.verified == nil)
            let otherDigest = SignedRequestorIDVerifier(ring: ring, digest: digest == .sha256 ? .sha1 : .sha256)
                .verify(reread, requestor: "nbcentertainment")
            #expect(otherDigest.status == .invalidSignature)
            #expect(otherDigest.reason.contains("--digest \(digest.rawValue)"))
            let wrongKey = SignedRequestorIDVerifier(ring: try Self.ring("test-rsa2048-b.pub.pem"), digest: digest)
                .verify(reread, requestor: "nbcentertainment")
            #expect(wrongKey.status == .invalidSignature)
        }
    }

    @Test("without a requestor the signature is not verified")
    func noRequestor() throws {
        let id = try SignedRequestorID(base64: Array("AQID".utf8))
        let verdict = SignedRequestorIDVerifier(ring: try Self.ring("test-rsa2048.pub.pem")).verify(id)
        #expect(verdict.status == .invalidRequestorID && verdict.verified == nil)
    }

    @Test("a signature made by openssl dgst -sha256/-sha1 -sign verifies; a tampered one does not", arguments: ["sha256", "sha1"])
    func opensslSigned(digest: String) throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let message = directory.appendingPathComponent("requestor")
        let signature = directory.appendingPathComponent("sig")
        try F.write(Array("Turner".utf8), to: message)
        let result = try F.openssl(["dgst", "-\(digest)", "-sign", F.path("test-rsa2048.pem"), "-out", signature.path, message.path])
        try #require(result.status == 0, "\(result.errorText)")
        var bytes = Array(try Data(contentsOf: signature))
        let verifier = SignedRequestorIDVerifier(ring: try Self.ring("test-rsa2048.pub.pem"), digest: RequestorIDDigest(rawValue: digest)!)
        let id = try SignedRequestorID(base64: Array(Data(bytes).base64EncodedString().utf8), requestor: "Turner")
        #expect(verifier.verify(id).status == .validToken)
        bytes[100] ^= 1
        let tampered = try SignedRequestorID(base64: Array(Data(bytes).base64EncodedString().utf8), requestor: "Turner")
        #expect(verifier.verify(tampered).status == .invalidSignature)
    }
}

/// A `.p12` in a key directory is skipped with a warning (docs/DESIGN.md#key-passwords): it holds a private key.
@Suite("PKCS#12 in a key directory")
struct PKCS12KeyDirectoryTests {
    typealias F = SignatureFixtures

    /// The test RSA key and its certificate as `programmer.p12` in `directory`, made by the openssl CLI.
    static func programmerPKCS12(in directory: URL, password: String) throws -> String {
        let p12 = directory.appendingPathComponent("programmer.p12").path
        let made = try F.openssl([
            "pkcs12", "-export", "-inkey", F.path("test-rsa2048.pem"), "-in", F.path("test-rsa2048-cert.pem"),
            "-passout", "pass:\(password)", "-out", p12,
        ])
        try #require(made.status == 0, "\(made.errorText)")
        return p12
    }

    @Test("skipped with a notice naming PKCS#12; the directory's public key still loads; given as --key it is refused")
    func skipped() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let p12 = try Self.programmerPKCS12(in: directory, password: "x")
        try F.write(F.bytes("test-rsa2048.pub.pem"), to: directory.appendingPathComponent("trusted.pem"))
        let ring = try KeyRing.load(paths: [directory.path])
        #expect(ring.keys.count == 1)
        #expect(ring.notices.contains { $0.code == .privateKeySkipped && $0.message.contains("PKCS#12") }, "\(ring.notices)")
        #expect(throws: KeyError(code: .unsupportedFormat, source: p12, message: "")) { try KeyRing.load(paths: [p12]) }
        // With a password source the directory still skips it: a mounted directory is not a choice of file.
        let withPassword = try KeyRing.load(paths: [directory.path], pkcs12Password: { KeyPassword("x", origin: "test") })
        #expect(withPassword.keys.count == 1)
    }

    @Test("named for the credentials with its password: the public half of its key loads, the password asked once and only then")
    func namedWithPassword() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let p12 = try Self.programmerPKCS12(in: directory, password: "s3cret")
        final class Asked: @unchecked Sendable { var count = 0 }
        let asked = Asked()
        let password: () throws(KeyError) -> KeyPassword = {
            asked.count += 1
            return KeyPassword("s3cret", origin: "test")
        }
        // No PKCS#12 named: the password is never asked for.
        _ = try KeyRing.load(paths: [F.path("test-rsa2048.pub.pem")], pkcs12Password: password)
        #expect(asked.count == 0)

        let ring = try KeyRing.load(paths: [p12, F.path("test-rsa2048.pub.pem"), p12], pkcs12Password: password)
        #expect(asked.count == 1)
        let expected = try PublicKey.keys(from: F.bytes("test-rsa2048.pub.pem"), source: "pub").first?.sha256Fingerprint
        #expect(ring.keys.map(\.sha256Fingerprint) == Array(repeating: expected, count: 3))
        #expect(ring.keys.first?.source == p12)

        let statementKeys = try JWSVerificationKey.load(paths: [p12], pkcs12Password: password)
        #expect(statementKeys.keys.map(\.sha256Fingerprint) == [expected])

        // A wrong password fails the load, naming the file and where the password came from.
        do {
            _ = try KeyRing.load(paths: [p12], pkcs12Password: { KeyPassword.empty })
            Issue.record("a wrong PKCS#12 password was accepted")
        } catch {
            #expect(error.code == .unsupportedFormat)
            #expect(
                error.message.contains(p12) && error.message.contains("password is wrong") && error.message.contains("the empty password"),
                "\(error.message)"
            )
        }
    }
}
