import Foundation
import Testing

@testable import EntitlementTokens

/// Key formats, sniffing, and the refusals of docs/DESIGN.md#signatures-and-keys.
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

    @Test(
        "Every public format of one key gives the same key",
        arguments: [
            "test-rsa2048-pkcs1.pub.pem",  // PEM RSA PUBLIC KEY (PKCS#1)
            "test-rsa2048-cert.pem",  // PEM CERTIFICATE (self-signed)
            "test-rsa2048.pub.der",  // DER SubjectPublicKeyInfo
            "test-rsa2048-cert.der",  // DER certificate
            "test-rsa2048-pem-named.der",  // PEM content, misleading extension
        ]
    )
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
        let text =
            Array("Certificate:\n    Data: whatever a dump prints\n".utf8)
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
        .init(
            label: "second block broken",
            bytes: Array(
                ("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n"
                    + "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n").utf8
            )
        ),
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
            withDestinationPath: F.path("test-rsa3072.pub.pem")
        )

        let ring = try KeyRing.load(paths: [directory.path])
        #expect(ring.keys.map(\.algorithm) == [.rsaPKCS1SHA256, .ecdsaP256SHA256, .rsaPKCS1SHA256, .ed25519, .rsaPKCS1SHA256])
        #expect(ring.keys.map(\.bits) == [2048, 256, 2048, 256, 3072])
        #expect(
            ring.keys.map { URL(fileURLWithPath: $0.source).lastPathComponent }
                == ["a-two.pem", "a-two.pem", "b-cert.der", "c-ed25519", "d-link.pem"]
        )
        // A directory path with a trailing slash is the same directory.
        #expect(try KeyRing.load(paths: [directory.path + "/"]).keys == ring.keys)
        // The subdirectory is said, as a note; hidden files are not.
        #expect(ring.notices.map(\.code) == [.subdirectoryNotEntered])
        #expect(ring.notices.map(\.severity) == [.note])
        #expect(ring.notices.first?.source == directory.appendingPathComponent("sub").path)
    }

    /// The same file named directly is the operator's explicit choice, so
    /// what a directory would skip is an error there.
    @Test func aNonKeyFileGivenDirectlyIsAnErrorNamingIt() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let stray = directory.appendingPathComponent("notes.txt")
        try F.write(Array("rotate the key next month\n".utf8), to: stray)
        let error = #expect(throws: KeyError.self) { _ = try KeyRing.load(paths: [stray.path]) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.source == stray.path)
        #expect(throws: KeyError(code: .unsupportedFormat, source: F.path("test-rsa2048.pem"), message: "")) {
            _ = try KeyRing.load(paths: [F.path("test-rsa2048.pem")])
        }
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
        #expect(signature.count == 128)  // the "old 128-byte signatures" of docs/DESIGN.md#signatures-and-keys
        let verifies = key.isValidSignature(signature, for: F.tokenMessage)
        #expect(verifies)
    }

    @Test(
        "Unsupported key types",
        arguments: [
            "test-p384.pub.pem", "test-ed448.pub.pem", "test-p384.pem", "test-ed448.pem",
            "test-rsapss2048-sha512.pub.pem",
        ]
    )
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

    @Test(
        "Every private format loads and matches its public key",
        arguments: [
            ("test-rsa2048.pem", "test-rsa2048.pub.pem"),  // PEM PRIVATE KEY (PKCS#8)
            ("test-rsa2048-traditional.pem", "test-rsa2048.pub.pem"),  // PEM RSA PRIVATE KEY
            ("test-rsa2048.der", "test-rsa2048.pub.pem"),  // DER PKCS#8
            ("test-p256.pem", "test-p256.pub.pem"),
            ("test-p256-sec1.pem", "test-p256.pub.pem"),  // PEM EC PRIVATE KEY
            ("test-rsapss2048.pem", "test-rsapss2048.pub.pem"),
            ("test-ed25519.pem", "test-ed25519.pub.pem"),
        ]
    )
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

    @Test(
        "Public keys are not signing keys",
        arguments: ["test-rsa2048.pub.pem", "test-rsa2048-cert.pem", "test-rsa2048.pub.der", "test-rsa2048-cert.der"]
    )
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

/// docs/DESIGN.md#degenerate-keys: keys whose mathematics make forgery trivial (or verification
/// needlessly slow) are refused at load, whatever the options. The fixtures
/// are made by `Fixtures/Keys/make-degenerate-keys.py` (test-only).
@Suite("Signature: degenerate keys")
struct SignatureDegenerateKeyTests {
    typealias F = SignatureFixtures

    /// Every option combination: none of them may let a degenerate key in.
    static let everyOptions = [
        KeyLoadingOptions(),
        KeyLoadingOptions(allowsInsecureKeySizes: true),
        KeyLoadingOptions(treatsRSAKeysAsPSS: true),
        KeyLoadingOptions(allowsInsecureKeySizes: true, treatsRSAKeysAsPSS: true),
    ]

    @Test(
        "Refused whatever the options, naming the file and the reason",
        arguments: [
            ("test-degenerate-rsa2048-e1.pub.pem", "e = 1 is below 3"),
            ("test-degenerate-rsa2048-e1-pkcs1.pub.pem", "e = 1 is below 3"),
            ("test-degenerate-rsa2048-e2.pub.pem", "e = 2 is below 3"),
            ("test-degenerate-rsa2048-e65538.pub.pem", "e = 65538 is even"),
            ("test-degenerate-rsa2048-e33bits.pub.pem", "33 bits long, over 32 bits"),
            ("test-degenerate-rsa3072-e3070bits.pub.pem", "3070 bits long, over 32 bits"),
            ("test-degenerate-rsa2048-even-modulus.pub.pem", "modulus is even"),
            ("test-degenerate-rsa16392.pub.pem", "16392 bits is over 16384 bits"),
            ("test-degenerate-p256-off-curve.pub.pem", "off the curve"),
            ("test-degenerate-p256-infinity.pub.pem", "public-key check"),
            ("test-degenerate-ed25519-identity.pub.pem", "identity point"),
            ("test-degenerate-ed25519-noncanonical.pub.pem", "non-canonical"),
        ]
    )
    func refused(name: String, reason: String) throws {
        for options in Self.everyOptions {
            let error = #expect(throws: KeyError.self) {
                _ = try KeyRing.load(paths: [F.path(name)], options: options)
            }
            #expect(error?.code == .degenerateKey, "\(name): \(error?.message ?? "loaded")")
            #expect(error?.source == F.path(name))
            #expect(error?.message.hasPrefix(F.path(name) + ": ") == true)
            #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
        }
    }

    /// The edges of the rules: e = 3, a 32-bit e, a 16384-bit modulus load.
    @Test("The boundaries load", arguments: ["test-rsa2048-e3.pub.pem", "test-rsa2048-e32bits.pub.pem", "test-rsa16384-modulus.pub.pem"])
    func boundariesLoad(name: String) throws {
        let key = try F.publicKey(name)
        #expect(key.algorithm == .rsaPKCS1SHA256)
    }

    /// A degenerate key in a trusted directory fails the whole load: it is
    /// a key, not a stray file, and skipping it would hide the attack.
    @Test func aDegenerateKeyInADirectoryFailsTheLoad() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        try F.write(F.bytes("test-rsa2048.pub.pem"), to: directory.appendingPathComponent("a-good.pem"))
        let bad = directory.appendingPathComponent("b-e1.pem")
        try F.write(F.bytes("test-degenerate-rsa2048-e1.pub.pem"), to: bad)
        #expect(throws: KeyError(code: .degenerateKey, source: bad.path, message: "")) {
            _ = try KeyRing.load(paths: [directory.path])
        }
    }

    /// The decoded key, with no policy applied: what OpenSSL alone would do.
    func uncheckedVerifier(_ name: String, _ algorithm: SignatureAlgorithm) throws -> SignatureVerifier {
        let decoded = try KeyDecoding.publicKeys(from: F.bytes(name), source: name)
        try #require(decoded.count == 1)
        return try SignatureVerifier(key: decoded[0].key, algorithm: algorithm)
    }

    func forgedToken(_ name: String) throws -> (signature: [UInt8], message: [UInt8]) {
        let token = try Fixtures.decode(String(decoding: F.bytes(name), as: UTF8.self))
        return (try #require(token.signatureBytes), Array(token.signedBytes))
    }

    /// The review's reproducers: with the key alone, OpenSSL accepts a
    /// signature made without any private key. Refusing the key at load is
    /// what stops the forgery.
    @Test(
        "A forgery OpenSSL would accept is stopped at load",
        arguments: [
            ("test-degenerate-rsa2048-e1.pub.pem", SignatureAlgorithm.rsaPKCS1SHA256, "test-forged-rsa-e1.token"),
            ("test-degenerate-ed25519-identity.pub.pem", SignatureAlgorithm.ed25519, "test-forged-ed25519-identity.token"),
        ]
    )
    func forgeryIsStopped(keyName: String, algorithm: SignatureAlgorithm, tokenName: String) throws {
        let forged = try forgedToken(tokenName)
        let verifier = try uncheckedVerifier(keyName, algorithm)
        var digest = SignedMessageDigest()
        let acceptedByOpenSSL = verifier.isValid(forged.signature.span, message: forged.message.span, digest: &digest)
        #expect(acceptedByOpenSSL, "the fixture is no longer a working forgery; the test proves nothing")
        // Through the public API the key never loads, so the forged token never verifies.
        #expect(throws: KeyError(code: .degenerateKey, source: F.path(keyName), message: "")) {
            _ = try KeyRing.load(paths: [F.path(keyName)])
        }
        // And a sound ring refuses it.
        let ring = try KeyRing.load(paths: [F.path("test-rsa2048.pub.pem"), F.path("test-ed25519.pub.pem")])
        #expect(ring.verifyingKey(for: forged.signature, message: forged.message) == nil)
    }

    static func ed25519SubjectPublicKeyInfo(_ raw: [UInt8]) -> [UInt8] {
        [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00] + raw
    }

    /// Each entry of the small-order table is refused, and each really is
    /// of small order: OpenSSL alone accepts `R = identity, S = 0` under it
    /// for some message among the first 200 (1 message in `order` does), so
    /// a mistyped table entry fails this test.
    @Test(
        "Every small-order Ed25519 point is refused",
        arguments: DegenerateKeys.ed25519SmallOrderPoints.map { $0.encoding }
    )
    func smallOrderPoints(encoding: [UInt8]) throws {
        let spki = Self.ed25519SubjectPublicKeyInfo(encoding)
        let error = #expect(throws: KeyError.self) { _ = try PublicKey.keys(from: spki, source: "small-order") }
        #expect(error?.code == .degenerateKey)
        #expect(error?.message.contains("order") == true || error?.message.contains("identity") == true)

        let decoded = try KeyDecoding.publicKeys(from: spki, source: "small-order")
        let verifier = try SignatureVerifier(key: decoded[0].key, algorithm: .ed25519)
        let forgery = DegenerateKeys.ed25519Identity + [UInt8](repeating: 0, count: 32)
        var digest = SignedMessageDigest()
        let forgedMessages = (0..<200).filter { index in
            let message = Array("message \(index)".utf8)
            return verifier.isValid(forgery.span, message: message.span, digest: &digest)
        }
        #expect(!forgedMessages.isEmpty, "\(encoding) verified no forgery: not of small order")
    }

    @Test func ed25519EncodingRules() throws {
        // The 8-torsion has exactly 8 points: 8 distinct entries, each shown
        // to be of small order by the test above, are all of them.
        let table = DegenerateKeys.ed25519SmallOrderPoints
        #expect(Set(table.map(\.encoding)).count == 8)
        #expect(table.map(\.order).sorted() == [1, 2, 4, 4, 8, 8, 8, 8])
        let p = DegenerateKeys.ed25519FieldPrime
        func withY(_ y: [UInt8], signBit: Bool = false) -> [UInt8] {
            var bytes = y
            if signBit { bytes[31] |= 0x80 }
            return bytes
        }
        func plus(_ value: [UInt8], _ small: UInt8) -> [UInt8] {
            var bytes = value
            bytes[0] += small  // no carry: p's low byte is 0xed
            return bytes
        }
        // y ≥ p: non-canonical, whatever the point it would reduce to.
        for y in [p, plus(p, 1), plus(p, 2), plus(p, 18)] {
            #expect(DegenerateKeys.ed25519Defect(encoded: y)?.contains("non-canonical") == true)
            #expect(DegenerateKeys.ed25519Defect(encoded: withY(y, signBit: true))?.contains("non-canonical") == true)
        }
        // x = 0 with the sign bit set: non-canonical identity and order-2 point.
        #expect(DegenerateKeys.ed25519Defect(encoded: withY(DegenerateKeys.ed25519Identity, signBit: true))?.contains("non-canonical") == true)
        #expect(DegenerateKeys.ed25519Defect(encoded: withY(DegenerateKeys.ed25519PrimeMinusOne, signBit: true))?.contains("non-canonical") == true)
        // Wrong length.
        #expect(DegenerateKeys.ed25519Defect(encoded: [UInt8](repeating: 9, count: 31)) != nil)
        // Sound keys: the fixture key, and y = p − 2 (canonical, not small order).
        let fixture = try F.publicKey("test-ed25519.pub.pem").derRepresentation.suffix(32)
        #expect(DegenerateKeys.ed25519Defect(encoded: Array(fixture)) == nil)
        var belowP = p
        belowP[0] -= 2
        #expect(DegenerateKeys.ed25519Defect(encoded: belowP) == nil)
    }

    /// Sound keys of every type still load (the rules refuse nothing real).
    @Test(
        "Sound keys load",
        arguments: [
            "test-rsa2048.pub.pem", "test-rsa3072.pub.pem", "test-rsapss2048.pub.pem",
            "test-p256.pub.pem", "test-ed25519.pub.pem", "test-rsa2048-cert.pem",
        ]
    )
    func soundKeysLoad(name: String) throws {
        _ = try F.publicKey(name)
    }

    /// Signing keys go through the same rules (the public half is re-loaded).
    @Test func signingKeysFollowTheSameRules() throws {
        // A real key pair is sound; no private key file can be degenerate
        // without being built by hand, so the shared path is what is checked.
        let signer = try F.signingKey("test-ed25519.pem")
        #expect(signer.publicKey == (try F.publicKey("test-ed25519.pub.pem")))
    }
}

/// docs/DESIGN.md#signatures-and-keys: key paths that are not regular files, and what key directories skip.
@Suite("Signature: key files and directories")
struct SignatureKeyDirectoryTests {
    typealias F = SignatureFixtures

    func makeFIFO(_ url: URL) throws {
        try #require(mkfifo(url.path, 0o600) == 0, "mkfifo failed: \(errno)")
    }

    // The time limits below guard against a hang, not for speed: in the whole suite on two
    // cores a limit's clock also counts the minute or more a test may wait for a thread.
    /// A FIFO with no writer: opening it for reading would block forever.
    @Test(.timeLimit(.minutes(10)))
    func aFIFOIsRefusedWithoutBeingRead() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let fifo = directory.appendingPathComponent("key.pem")
        try makeFIFO(fifo)
        let error = #expect(throws: KeyError.self) { _ = try KeyRing.load(paths: [fifo.path]) }
        #expect(error?.code == .notARegularFile)
        #expect(error?.source == fifo.path)
        #expect(error?.message.contains("FIFO") == true)
        // The signing-key path is guarded the same way.
        #expect(throws: KeyError(code: .notARegularFile, source: fifo.path, message: "")) {
            _ = try SigningKey(path: fifo.path)
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func aDeviceIsRefused() throws {
        let error = #expect(throws: KeyError.self) { _ = try KeyRing.load(paths: ["/dev/zero"]) }
        #expect(error?.code == .notARegularFile)
        #expect(error?.message.contains("character device") == true)
        #expect(throws: KeyError(code: .notARegularFile, source: "/dev/null", message: "")) {
            _ = try KeyFiles.read("/dev/null")
        }
    }

    /// A symlink is followed to what it names: to a FIFO it is refused too.
    @Test(.timeLimit(.minutes(10)))
    func aSymlinkToAFIFOIsRefused() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let fifo = directory.appendingPathComponent("fifo")
        try makeFIFO(fifo)
        let link = directory.appendingPathComponent("key.pem")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: fifo.path)
        #expect(throws: KeyError(code: .notARegularFile, source: link.path, message: "")) {
            _ = try KeyRing.load(paths: [link.path])
        }
    }

    /// A key directory as operators keep one: the key, its private half, a
    /// README, a FIFO, a bundle of certificate and private key, an old
    /// subdirectory. Keys load; each other entry is a notice naming it.
    @Test(.timeLimit(.minutes(10)))
    func aDirectorySkipsWhatHoldsNoTrustedKeyWithNotices() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        func at(_ name: String) -> URL { directory.appendingPathComponent(name) }
        try F.write(Array("These keys verify tokens from the issuer.\n-----BEGIN nothing\n".utf8), to: at("README.md"))
        try F.write(F.bytes("test-rsa2048.pub.pem"), to: at("issuer.pub.pem"))
        try F.write(F.bytes("test-rsa2048.pem"), to: at("issuer.pem"))
        try F.write(F.bytes("test-p256.pem") + F.bytes("test-rsa2048-cert.pem"), to: at("bundle.pem"))
        try F.write(F.bytes("test-rsa2048.der"), to: at("issuer-private.der"))
        try F.write([], to: at("empty.pem"))
        try F.write(Array("-----BEGIN CERTIFICATE REQUEST-----\nAAECAwQ=\n-----END CERTIFICATE REQUEST-----\n".utf8), to: at("request.csr"))
        try makeFIFO(at("pipe"))
        try FileManager.default.createDirectory(at: at("old"), withIntermediateDirectories: false)
        try F.write(F.bytes("test-rsa2048-b.pub.pem"), to: at("old/previous.pem"))

        let ring = try KeyRing.load(paths: [directory.path])
        #expect(ring.keys == [try F.publicKey("test-rsa2048-cert.pem"), try F.publicKey("test-rsa2048.pub.pem")])
        #expect(ring.keys.map(\.source) == [at("bundle.pem").path, at("issuer.pub.pem").path])
        let notices = ring.notices.map { "\($0.code) \(URL(fileURLWithPath: $0.source).lastPathComponent)" }
        #expect(
            notices == [
                "holdsNoKey README.md",
                "privateKeySkipped bundle.pem",
                "holdsNoKey empty.pem",
                "privateKeySkipped issuer-private.der",
                "privateKeySkipped issuer.pem",
                "subdirectoryNotEntered old",
                "notARegularFile pipe",
                "holdsNoKey request.csr",
            ]
        )
        for notice in ring.notices {
            #expect(notice.message.hasPrefix(notice.source + ": "))
            #expect(notice.severity == (notice.code == .subdirectoryNotEntered ? .note : .warning))
        }
        let bundle = try #require(ring.notices.first { $0.source == at("bundle.pem").path })
        #expect(bundle.message.contains("partly skipped: block 1 (PRIVATE KEY) is a private key"))
        let pipe = try #require(ring.notices.first { $0.code == .notARegularFile })
        #expect(pipe.message.contains("FIFO"))
    }

    /// A directory whose files hold no usable key is "nothing usable".
    @Test func aDirectoryWithNoUsableKeyIsNoKeysFound() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        try F.write(Array("notes\n".utf8), to: directory.appendingPathComponent("README"))
        try F.write(F.bytes("test-p256.pem"), to: directory.appendingPathComponent("signing.pem"))
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("sub"), withIntermediateDirectories: false)
        let error = #expect(throws: KeyError.self) { _ = try KeyRing.load(paths: [directory.path]) }
        #expect(error?.code == .noKeysFound)
        #expect(error?.source == directory.path)
        #expect(error?.message.contains("no usable key") == true)
        #expect(error?.message.contains("README (holds no key)") == true)
        #expect(error?.message.contains("signing.pem (a private key)") == true)
        #expect(error?.message.contains("sub (a subdirectory)") == true)
    }

    /// A block that claims to be a public key and does not decode is a
    /// broken key the operator meant to trust, not a stray file.
    @Test func aCorruptKeyInADirectoryFailsTheLoad() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        try F.write(F.bytes("test-rsa2048.pub.pem"), to: directory.appendingPathComponent("a.pem"))
        let corrupt = directory.appendingPathComponent("b.pem")
        try F.write(Array("-----BEGIN PUBLIC KEY-----\nAAECAwQFBgcICQ==\n-----END PUBLIC KEY-----\n".utf8), to: corrupt)
        #expect(throws: KeyError(code: .unsupportedFormat, source: corrupt.path, message: "")) {
            _ = try KeyRing.load(paths: [directory.path])
        }
        // So is a key the options refuse.
        try F.write(F.bytes("test-rsa1024.pub.pem"), to: corrupt)
        #expect(throws: KeyError(code: .insecureKeySize, source: corrupt.path, message: "")) {
            _ = try KeyRing.load(paths: [directory.path])
        }
    }

    /// A file name that is not UTF-8 is still read by its real bytes.
    @Test func aFileNameThatIsNotUTF8StillLoads() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let name: [UInt8] = Array("key-".utf8) + [0xff, 0xfe] + Array(".pem".utf8)
        let path = Array(directory.path.utf8) + [UInt8(ascii: "/")] + name + [0]
        let key = try F.bytes("test-p256.pub.pem")
        let written = path.withUnsafeBufferPointer { pointer in
            pointer.withMemoryRebound(to: CChar.self) { cPath -> Bool in
                guard let file = fopen(cPath.baseAddress, "w") else { return false }
                defer { fclose(file) }
                return fwrite(key, 1, key.count, file) == key.count
            }
        }
        try #require(written)
        let ring = try KeyRing.load(paths: [directory.path])
        #expect(ring.keys == [try F.publicKey("test-p256.pub.pem")])
        #expect(ring.keys[0].source.contains("\u{FFFD}"))
    }

    // MARK: Certificate dates

    /// `test-rsa2048-cert.pem`'s dates, read by the `openssl` CLI.
    func certificateDates() throws -> (notBefore: TokenTimestamp, notAfter: TokenTimestamp) {
        let result = try F.openssl(["x509", "-in", F.path("test-rsa2048-cert.pem"), "-noout", "-dates", "-dateopt", "iso_8601"])
        try #require(result.status == 0, "\(result.errorText)")
        var dates: [String: TokenTimestamp] = [:]
        for line in String(decoding: result.output, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            try #require(parts.count == 2)
            dates[String(parts[0])] = try TokenDateParser.parse(String(parts[1]).replacingOccurrences(of: " ", with: "T")).timestamp
        }
        return (try #require(dates["notBefore"]), try #require(dates["notAfter"]))
    }

    @Test func certificateDatesAreKept() throws {
        let dates = try certificateDates()
        let key = try F.publicKey("test-rsa2048-cert.pem")
        #expect(key.certificateValidity == CertificateValidity(notBefore: dates.notBefore, notAfter: dates.notAfter))
        #expect(try F.publicKey("test-rsa2048-cert.der").certificateValidity == key.certificateValidity)
        #expect(try F.publicKey("test-rsa2048.pub.pem").certificateValidity == nil)
    }

    /// Outside its dates a certificate still yields its key, with a warning.
    @Test func aCertificateOutsideItsDatesYieldsItsKeyWithAWarning() throws {
        let dates = try certificateDates()
        let path = F.path("test-rsa2048-cert.pem")
        let day: Int64 = 86_400_000
        func load(at now: TokenTimestamp) throws -> KeyRing { try KeyRing.load(paths: [path], now: now) }

        let within = try load(at: dates.notAfter)  // both ends included
        #expect(within.keys.count == 1)
        #expect(within.notices.isEmpty)
        #expect(try load(at: dates.notBefore).notices.isEmpty)

        let expired = try load(at: try #require(dates.notAfter.adding(milliseconds: 1000)))
        #expect(expired.keys == within.keys)
        #expect(expired.notices.map(\.code) == [.certificateExpired])
        #expect(expired.notices.first?.source == path)
        #expect(expired.notices.first?.message.contains(dates.notAfter.iso8601) == true)

        let early = try load(at: try #require(dates.notBefore.adding(milliseconds: -day)))
        #expect(early.keys == within.keys)
        #expect(early.notices.map(\.code) == [.certificateNotYetValid])
        #expect(early.notices.first?.message.contains(dates.notBefore.iso8601) == true)
    }
}
