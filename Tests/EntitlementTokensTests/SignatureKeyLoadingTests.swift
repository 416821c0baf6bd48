import Foundation
import Testing
@testable import EntitlementTokens

/// Key formats, sniffing, and the refusals of SPEC §3.
@Suite("Signature: loading public keys")
struct SignatureKeyLoadingTests {
    typealias F = SignatureFixtures

    /// The reference key everything else is compared with.
    func referenceKey() throws -> PublicKey { try F.publicKey("test-rsa2048.pub.pem") }

    @Test func pemPublicKey() throws {
        let key = try referenceKey()
        #expect(key.algorithm == .rsaPKCS1SHA256)
        #expect(key.bits == 2048)
        #expect(key.source == F.path("test-rsa2048.pub.pem"))
        #expect(key.derRepresentation == (try F.bytes("test-rsa2048.pub.der")))
    }

    /// The fingerprint is the one `openssl dgst -sha256` gives for the DER
    /// SubjectPublicKeyInfo, so people can compare keys across tools.
    @Test func fingerprintMatchesOpenSSL() throws {
        let result = try F.openssl(["dgst", "-sha256", "-r", F.path("test-rsa2048.pub.der")])
        #expect(result.status == 0, "\(result.errorText)")
        let expected = String(decoding: result.output, as: UTF8.self).prefix(64)
        let key = try referenceKey()
        #expect(key.sha256Fingerprint == String(expected))
        #expect(key.sha256Fingerprint.count == 64)
        #expect(key.description.contains(key.sha256Fingerprint))
        #expect(key.description.contains("RSA-2048"))
        #expect(key.description.contains("SHA256withRSA"))
        #expect(key.description.contains(F.path("test-rsa2048.pub.pem")))
    }

    @Test("Every public format of one key gives the same key",
          arguments: [
              "test-rsa2048-pkcs1.pub.pem",   // PEM RSA PUBLIC KEY (PKCS#1)
              "test-rsa2048-cert.pem",        // PEM CERTIFICATE (self-signed)
              "test-rsa2048.pub.der",         // DER SubjectPublicKeyInfo
              "test-rsa2048-cert.der",        // DER certificate
              "test-rsa2048-pem-named.der",   // PEM content, misleading extension
          ])
    func everyFormat(name: String) throws {
        let key = try F.publicKey(name)
        #expect(key == (try referenceKey()))
        #expect(key.algorithm == .rsaPKCS1SHA256)
        #expect(key.bits == 2048)
        #expect(key.source == F.path(name))
    }

    @Test func derPKCS1RSAPublicKey() throws {
        let result = try F.openssl(["rsa", "-pubin", "-in", F.path("test-rsa2048.pub.pem"), "-RSAPublicKey_out", "-outform", "DER"])
        #expect(result.status == 0, "\(result.errorText)")
        let keys = try PublicKey.keys(from: result.output, source: "inline")
        #expect(keys == [try referenceKey()])
    }

    @Test func twoPEMBlocksGiveTwoKeys() throws {
        let keys = try PublicKey.keys(from: F.bytes("test-two-keys.pub.pem"), source: "two")
        #expect(keys.map(\.algorithm) == [.rsaPKCS1SHA256, .ecdsaP256SHA256])
        #expect(keys[0] == (try referenceKey()))
        #expect(keys[1] == (try F.publicKey("test-p256.pub.pem")))
        #expect(keys.allSatisfy { $0.source == "two" })
    }

    /// Sniffing is by content: DER bytes in a `.pem` file and PEM bytes in a
    /// `.der` file both load through the file path API.
    @Test func sniffingIgnoresTheFileExtension() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let derAsPEM = directory.appendingPathComponent("actually-der.pem")
        try F.write(F.bytes("test-rsa2048.pub.der"), to: derAsPEM)
        let pemAsDER = directory.appendingPathComponent("actually-pem.der")
        try F.write(F.bytes("test-p256.pub.pem"), to: pemAsDER)
        let ring = try KeyRing.load(paths: [derAsPEM.path, pemAsDER.path])
        #expect(ring.keys.map(\.algorithm) == [.rsaPKCS1SHA256, .ecdsaP256SHA256])
        #expect(ring.keys[0] == (try referenceKey()))
    }

    /// Windows line endings and a UTF-8 byte order mark change nothing.
    @Test func crlfAndByteOrderMark() throws {
        let pem = try F.bytes("test-two-keys.pub.pem")
        var crlf: [UInt8] = [0xef, 0xbb, 0xbf]
        for byte in pem { if byte == 0x0a { crlf += [0x0d, 0x0a] } else { crlf.append(byte) } }
        let keys = try PublicKey.keys(from: crlf, source: "windows")
        #expect(keys == (try PublicKey.keys(from: pem, source: "unix")))
        let privatePEM = try F.bytes("test-p256.pem")
        let signer = try SigningKey(bytes: [0xef, 0xbb, 0xbf] + privatePEM, source: "bom")
        #expect(signer.publicKey == keys[1])
    }

    /// Text around PEM blocks (e.g. `openssl x509 -text` output) is ignored.
    @Test func textAroundPEMBlocksIsIgnored() throws {
        let text = Array("Certificate:\n    Data: whatever a dump prints\n".utf8)
            + (try F.bytes("test-rsa2048-cert.pem")) + Array("trailing notes\n".utf8)
        #expect(try PublicKey.keys(from: text, source: "dump") == [try referenceKey()])
    }

    @Test func garbageIsUnsupportedFormatNamingTheSource() throws {
        let path = F.path("test-garbage.pem")
        let error = #expect(throws: KeyError.self) {
            _ = try KeyRing.load(paths: [path])
        }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.source == path)
        #expect(error?.message.contains(path) == true)
        #expect(error?.description == error?.message)
    }

    /// A named hostile input; the name (not the bytes) labels the test case.
    struct MalformedInput: CustomTestStringConvertible, Sendable {
        var label: String
        var bytes: [UInt8]
        var testDescription: String { label }
    }

    static let malformedInputs: [MalformedInput] = [
        .init(label: "truncated PEM", bytes: Array("-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n".utf8)),
        .init(label: "bad base64", bytes: Array("-----BEGIN PUBLIC KEY-----\n!!!!not base64!!!!\n-----END PUBLIC KEY-----\n".utf8)),
        .init(label: "PEM of garbage DER", bytes: Array("-----BEGIN PUBLIC KEY-----\nAAECAwQFBgcICQ==\n-----END PUBLIC KEY-----\n".utf8)),
        .init(label: "unknown PEM label", bytes: Array("-----BEGIN FOO BAR-----\nAAECAwQFBgcICQ==\n-----END FOO BAR-----\n".utf8)),
        .init(label: "second block broken", bytes: Array(("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n"
            + "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n").utf8)),
        .init(label: "DER-looking garbage", bytes: [0x30, 0x03, 0x02, 0x01, 0x01]),
        .init(label: "random bytes", bytes: (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7919) }),
    ]

    @Test("Malformed inputs are unsupportedFormat", arguments: malformedInputs)
    func malformed(input: MalformedInput) throws {
        let error = #expect(throws: KeyError.self) {
            _ = try PublicKey.keys(from: input.bytes, source: "case \(input.label)")
        }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.source == "case \(input.label)")
        #expect(error?.message.hasPrefix("case \(input.label): ") == true)
    }

    /// Bytes after a complete DER structure mean the input is not what it
    /// claims; they are not ignored.
    @Test func trailingBytesAfterDERAreRefused() throws {
        let bytes = try F.bytes("test-rsa2048.pub.der") + [0x00]
        #expect(throws: KeyError(code: .unsupportedFormat, source: "x", message: "")) {
            _ = try PublicKey.keys(from: bytes, source: "x")
        }
    }

    @Test("A private key is not a trust key", arguments: ["test-rsa2048.pem", "test-p256-sec1.pem", "test-rsa2048.der"])
    func privateKeyIsRefusedAsTrustKey(name: String) throws {
        let error = #expect(throws: KeyError.self) { _ = try F.publicKey(name) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("private key") == true)
    }

    @Test func missingFileIsUnreadableNamingThePath() throws {
        let path = F.path("test-does-not-exist.pem")
        let error = #expect(throws: KeyError.self) { _ = try KeyRing.load(paths: [path]) }
        #expect(error?.code == .unreadable)
        #expect(error?.source == path)
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("No such file") == true)
    }

    @Test func emptyInputIsNoKeysFound() throws {
        #expect(throws: KeyError(code: .noKeysFound, source: "e", message: "")) {
            _ = try PublicKey.keys(from: [], source: "e")
        }
        #expect(throws: KeyError(code: .noKeysFound, source: "e", message: "")) {
            _ = try PublicKey.keys(from: Array(" \n\t\n".utf8), source: "e")
        }
        #expect(throws: KeyError(code: .noKeysFound, source: "", message: "")) {
            _ = try KeyRing.load(paths: [])
        }
    }

    @Test func directoryLoadsEveryKeySortedByName() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        try F.write(F.bytes("test-ed25519.pub.pem"), to: directory.appendingPathComponent("c-ed25519"))
        try F.write(F.bytes("test-two-keys.pub.pem"), to: directory.appendingPathComponent("a-two.pem"))
        try F.write(F.bytes("test-rsa2048-cert.der"), to: directory.appendingPathComponent("b-cert.der"))
        // Skipped: hidden files (even garbage) and subdirectories.
        try F.write(Array("garbage".utf8), to: directory.appendingPathComponent(".hidden"))
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("sub"), withIntermediateDirectories: false)
        try F.write(Array("garbage".utf8), to: directory.appendingPathComponent("sub/garbage.pem"))
        // Followed: a symlink to a key, as in a Kubernetes secret mount.
        try FileManager.default.createSymbolicLink(
            atPath: directory.appendingPathComponent("d-link.pem").path,
            withDestinationPath: F.path("test-rsa3072.pub.pem"))

        let ring = try KeyRing.load(paths: [directory.path])
        #expect(ring.keys.map(\.algorithm) == [.rsaPKCS1SHA256, .ecdsaP256SHA256, .rsaPKCS1SHA256, .ed25519, .rsaPKCS1SHA256])
        #expect(ring.keys.map(\.bits) == [2048, 256, 2048, 256, 3072])
        #expect(ring.keys.map { URL(fileURLWithPath: $0.source).lastPathComponent }
                == ["a-two.pem", "a-two.pem", "b-cert.der", "c-ed25519", "d-link.pem"])
        // A directory path with a trailing slash is the same directory.
        #expect(try KeyRing.load(paths: [directory.path + "/"]).keys == ring.keys)
    }

    @Test func aNonKeyFileInADirectoryIsAnErrorNamingIt() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        try F.write(F.bytes("test-rsa2048.pub.pem"), to: directory.appendingPathComponent("a.pem"))
        let stray = directory.appendingPathComponent("notes.txt")
        try F.write(Array("rotate the key next month\n".utf8), to: stray)
        let error = #expect(throws: KeyError.self) { _ = try KeyRing.load(paths: [directory.path]) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.source == stray.path)
    }

    @Test func emptyDirectoryIsNoKeysFound() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        #expect(throws: KeyError(code: .noKeysFound, source: directory.path, message: "")) {
            _ = try KeyRing.load(paths: [directory.path])
        }
        // Only hidden files: still nothing to trust.
        try F.write(F.bytes("test-rsa2048.pub.pem"), to: directory.appendingPathComponent(".old.pem"))
        #expect(throws: KeyError(code: .noKeysFound, source: directory.path, message: "")) {
            _ = try KeyRing.load(paths: [directory.path])
        }
    }

    @Test func danglingSymlinkInADirectoryIsUnreadable() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let link = directory.appendingPathComponent("gone.pem")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: directory.appendingPathComponent("nowhere").path)
        #expect(throws: KeyError(code: .unreadable, source: link.path, message: "")) {
            _ = try KeyRing.load(paths: [directory.path])
        }
    }

    @Test func oversizedFileIsRefused() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let big = directory.appendingPathComponent("big.pem")
        try F.write([UInt8](repeating: 0x41, count: KeyFiles.maximumFileSize + 1), to: big)
        #expect(throws: KeyError(code: .unreadable, source: big.path, message: "")) {
            _ = try KeyRing.load(paths: [big.path])
        }
    }

    // MARK: Key types and sizes

    @Test func rsa1024IsRefusedByDefault() throws {
        let error = #expect(throws: KeyError.self) { _ = try F.publicKey("test-rsa1024.pub.pem") }
        #expect(error?.code == .insecureKeySize)
        #expect(error?.source == F.path("test-rsa1024.pub.pem"))
        #expect(error?.message.contains("RSA-1024") == true)
        #expect(error?.message.contains("--allow-insecure-keys") == true)
        // The private key is refused the same way.
        #expect(throws: KeyError(code: .insecureKeySize, source: F.path("test-rsa1024.pem"), message: "")) {
            _ = try F.signingKey("test-rsa1024.pem")
        }
    }

    @Test func rsa1024IsAcceptedWithTheOptIn() throws {
        let options = KeyLoadingOptions(allowsInsecureKeySizes: true)
        let key = try F.publicKey("test-rsa1024.pub.pem", options: options)
        #expect(key.bits == 1024)
        #expect(key.algorithm == .rsaPKCS1SHA256)
        let signer = try F.signingKey("test-rsa1024.pem", options: options)
        let signature = try signer.signature(for: F.tokenMessage)
        #expect(signature.count == 128)  // the "old 128-byte signatures" of SPEC §2
        let verifies = key.isValidSignature(signature, for: F.tokenMessage)
        #expect(verifies)
    }

    @Test("Unsupported key types", arguments: ["test-p384.pub.pem", "test-ed448.pub.pem", "test-p384.pem", "test-ed448.pem",
                                               "test-rsapss2048-sha512.pub.pem"])
    func unsupportedKeyTypes(name: String) throws {
        let error = #expect(throws: KeyError.self) {
            if name.hasSuffix(".pub.pem") { _ = try F.publicKey(name) } else { _ = try F.signingKey(name) }
        }
        #expect(error?.code == .unsupportedKeyType)
        #expect(error?.source == F.path(name))
    }

    /// An RSA-PSS key whose parameters pin SHA-512 cannot follow the
    /// SHA-256 rule; it is refused when loaded, not on the first token.
    @Test func pssKeyPinnedToAnotherDigestIsRefusedAtLoad() throws {
        let error = #expect(throws: KeyError.self) { _ = try F.publicKey("test-rsapss2048-sha512.pub.pem") }
        #expect(error?.code == .unsupportedKeyType)
        #expect(error?.message.contains("RSA-PSS-2048") == true)
        #expect(error?.message.contains("SHA256withRSA/PSS") == true)
    }

    @Test func p384MessageNamesTheCurve() throws {
        let error = #expect(throws: KeyError.self) { _ = try F.publicKey("test-p384.pub.pem") }
        #expect(error?.message.contains("secp384r1") == true)
    }

    @Test func keyTypeDecidesTheAlgorithm() throws {
        #expect(try F.publicKey("test-rsa3072.pub.pem").algorithm == .rsaPKCS1SHA256)
        #expect(try F.publicKey("test-rsa3072.pub.pem").bits == 3072)
        #expect(try F.publicKey("test-rsapss2048.pub.pem").algorithm == .rsaPSSSHA256)
        #expect(try F.publicKey("test-rsapss2048-restricted.pub.pem").algorithm == .rsaPSSSHA256)
        #expect(try F.publicKey("test-p256.pub.pem").algorithm == .ecdsaP256SHA256)
        #expect(try F.publicKey("test-p256.pub.pem").bits == 256)
        #expect(try F.publicKey("test-ed25519.pub.pem").algorithm == .ed25519)
        #expect(try F.publicKey("test-ed25519.pub.pem").bits == 256)
    }

    @Test func treatingRSAKeysAsPSS() throws {
        let options = KeyLoadingOptions(treatsRSAKeysAsPSS: true)
        let pss = try F.publicKey("test-rsa2048.pub.pem", options: options)
        #expect(pss.algorithm == .rsaPSSSHA256)
        #expect(pss != (try referenceKey()))  // same bits, different rule
        #expect(pss.derRepresentation == (try referenceKey()).derRepresentation)
        // The option never turns other key types into anything else.
        #expect(try F.publicKey("test-p256.pub.pem", options: options).algorithm == .ecdsaP256SHA256)
        #expect(try F.publicKey("test-ed25519.pub.pem", options: options).algorithm == .ed25519)
    }

    @Test func keyErrorEqualityIgnoresTheMessage() {
        #expect(KeyError(code: .unreadable, source: "a", message: "x") == KeyError(code: .unreadable, source: "a", message: "y"))
        #expect(KeyError(code: .unreadable, source: "a", message: "x") != KeyError(code: .unreadable, source: "b", message: "x"))
        #expect(KeyError(code: .unreadable, source: "a", message: "x") != KeyError(code: .noKeysFound, source: "a", message: "x"))
    }

    @Test func algorithmNamesAreTheVendorNames() {
        #expect(SignatureAlgorithm(rawValue: "SHA256withRSA") == .rsaPKCS1SHA256)
        #expect(SignatureAlgorithm.ecdsaP256SHA256.rawValue == "SHA256withECDSA")
        #expect(SignatureAlgorithm.rsaPSSSHA256.rawValue == "SHA256withRSA/PSS")
        #expect(SignatureAlgorithm.ed25519.rawValue == "Ed25519")
    }
}

/// Private keys for minting.
@Suite("Signature: loading signing keys")
struct SignatureSigningKeyLoadingTests {
    typealias F = SignatureFixtures

    @Test("Every private format loads and matches its public key", arguments: [
        ("test-rsa2048.pem", "test-rsa2048.pub.pem"),              // PEM PRIVATE KEY (PKCS#8)
        ("test-rsa2048-traditional.pem", "test-rsa2048.pub.pem"),  // PEM RSA PRIVATE KEY
        ("test-rsa2048.der", "test-rsa2048.pub.pem"),              // DER PKCS#8
        ("test-p256.pem", "test-p256.pub.pem"),
        ("test-p256-sec1.pem", "test-p256.pub.pem"),               // PEM EC PRIVATE KEY
        ("test-rsapss2048.pem", "test-rsapss2048.pub.pem"),
        ("test-ed25519.pem", "test-ed25519.pub.pem"),
    ])
    func privateFormats(privateName: String, publicName: String) throws {
        let signer = try F.signingKey(privateName)
        let expected = try F.publicKey(publicName)
        #expect(signer.publicKey == expected)
        #expect(signer.algorithm == expected.algorithm)
        #expect(signer.publicKey.source == F.path(privateName))
    }

    /// `openssl ecparam -genkey` writes an EC PARAMETERS block before the key.
    @Test func ecparamOutputLoads() throws {
        let signer = try F.signingKey("test-p256-ecparam.pem")
        #expect(signer.algorithm == .ecdsaP256SHA256)
    }

    @Test func signingKeyFromPath() throws {
        let signer = try SigningKey(path: F.path("test-ed25519.pem"))
        #expect(signer.algorithm == .ed25519)
        #expect(throws: KeyError(code: .unreadable, source: F.path("nope.pem"), message: "")) {
            _ = try SigningKey(path: F.path("nope.pem"))
        }
    }

    @Test("Public keys are not signing keys", arguments: ["test-rsa2048.pub.pem", "test-rsa2048-cert.pem", "test-rsa2048.pub.der", "test-rsa2048-cert.der"])
    func publicIsNotPrivate(name: String) throws {
        #expect(throws: KeyError(code: .notAPrivateKey, source: F.path(name), message: "")) {
            _ = try F.signingKey(name)
        }
    }

    @Test("Encrypted private keys are refused", arguments: ["test-p256-encrypted.pem", "test-p256-encrypted-traditional.pem"])
    func encrypted(name: String) throws {
        let error = #expect(throws: KeyError.self) { _ = try F.signingKey(name) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("encrypted") == true)
    }

    @Test func garbageAndTwoPrivateKeysAreRefused() throws {
        #expect(throws: KeyError(code: .unsupportedFormat, source: "g", message: "")) {
            _ = try SigningKey(bytes: F.bytes("test-garbage.pem"), source: "g")
        }
        let two = try F.bytes("test-rsa2048.pem") + F.bytes("test-p256.pem")
        #expect(throws: KeyError(code: .unsupportedFormat, source: "two", message: "")) {
            _ = try SigningKey(bytes: two, source: "two")
        }
        #expect(throws: KeyError(code: .noKeysFound, source: "empty", message: "")) {
            _ = try SigningKey(bytes: [], source: "empty")
        }
    }

    @Test func treatAsPSSSigningKey() throws {
        let signer = try F.signingKey("test-rsa2048.pem", options: KeyLoadingOptions(treatsRSAKeysAsPSS: true))
        #expect(signer.algorithm == .rsaPSSSHA256)
    }
}
