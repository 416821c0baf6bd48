import Foundation
import Testing

@testable import EntitlementTokens

/// Cross-checks with the `openssl` command line, in both directions: the CLI
/// is an independent implementation, so agreement means the padding, digest,
/// salt and encodings are the standard ones, not merely self-consistent.
@Suite("Signature: agreement with the openssl CLI")
struct SignatureOpenSSLCLITests {
    typealias F = SignatureFixtures

    /// Writes the message, runs `openssl` with `arguments(messagePath, signaturePath)`,
    /// and returns the signature it wrote.
    func opensslSignature(_ arguments: (String, String) -> [String]) throws -> [UInt8] {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let messageURL = directory.appendingPathComponent("message.xml")
        let signatureURL = directory.appendingPathComponent("message.sig")
        try F.write(F.tokenMessage, to: messageURL)
        let result = try F.openssl(arguments(messageURL.path, signatureURL.path))
        try #require(result.status == 0, "\(result.errorText)")
        return Array(try Data(contentsOf: signatureURL))
    }

    /// Writes message and signature and runs `openssl` to verify; returns its result.
    func opensslVerify(signature: [UInt8], _ arguments: (String, String) -> [String]) throws -> F.CommandResult {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let messageURL = directory.appendingPathComponent("message.xml")
        let signatureURL = directory.appendingPathComponent("message.sig")
        try F.write(F.tokenMessage, to: messageURL)
        try F.write(signature, to: signatureURL)
        return try F.openssl(arguments(messageURL.path, signatureURL.path))
    }

    // MARK: openssl signs, the library verifies

    @Test(
        "openssl dgst -sign verifies",
        arguments: [
            ("test-rsa2048.pem", "test-rsa2048.pub.pem", [String]()),
            ("test-rsa3072.pem", "test-rsa3072.pub.pem", [String]()),
            ("test-p256.pem", "test-p256.pub.pem", [String]()),
            ("test-rsapss2048.pem", "test-rsapss2048.pub.pem", [String]()),
            ("test-rsapss2048-restricted.pem", "test-rsapss2048-restricted.pub.pem", [String]()),
            ("test-rsa2048.pem", "test-rsa2048.pub.pem", ["-sigopt", "rsa_padding_mode:pss"]),
            ("test-rsa2048.pem", "test-rsa2048.pub.pem", ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest"]),
        ]
    )
    func opensslDgstSignatureVerifies(privateName: String, publicName: String, sigopts: [String]) throws {
        let signature = try opensslSignature { message, signature in
            ["dgst", "-sha256", "-sign", F.path(privateName)] + sigopts + ["-out", signature, message]
        }
        let options = KeyLoadingOptions(treatsRSAKeysAsPSS: sigopts.contains("rsa_padding_mode:pss"))
        let key = try F.publicKey(publicName, options: options)
        let verifies = key.isValidSignature(signature, for: F.tokenMessage)
        #expect(verifies)
        var tampered = F.tokenMessage
        tampered[tampered.count / 2] ^= 0x20
        let verifiesTampered = key.isValidSignature(signature, for: tampered)
        #expect(!verifiesTampered)
    }

    @Test func opensslEd25519SignatureVerifies() throws {
        let signature = try opensslSignature { message, signature in
            ["pkeyutl", "-sign", "-rawin", "-inkey", F.path("test-ed25519.pem"), "-in", message, "-out", signature]
        }
        #expect(signature.count == 64)
        let key = try F.publicKey("test-ed25519.pub.pem")
        let verifies = key.isValidSignature(signature, for: F.tokenMessage)
        #expect(verifies)
        let verifiesShortened = key.isValidSignature(signature, for: Array(F.tokenMessage.dropLast()))
        #expect(!verifiesShortened)
    }

    // MARK: the library signs, openssl verifies

    @Test(
        "openssl dgst -verify accepts library signatures",
        arguments: [
            ("test-rsa2048.pem", "test-rsa2048.pub.pem", false, [String]()),
            ("test-rsa3072.pem", "test-rsa3072.pub.pem", false, [String]()),
            ("test-p256.pem", "test-p256.pub.pem", false, [String]()),
            ("test-p256-sec1.pem", "test-p256.pub.pem", false, [String]()),
            // The library's PSS salt is exactly 32 bytes: pinned here.
            ("test-rsa2048.pem", "test-rsa2048.pub.pem", true, ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:32"]),
            ("test-rsapss2048.pem", "test-rsapss2048.pub.pem", false, ["-sigopt", "rsa_pss_saltlen:32"]),
            ("test-rsapss2048-restricted.pem", "test-rsapss2048-restricted.pub.pem", false, [String]()),
        ]
    )
    func librarySignatureVerifiesWithOpenSSL(privateName: String, publicName: String, treatAsPSS: Bool, sigopts: [String]) throws {
        let signer = try F.signingKey(privateName, options: .init(treatsRSAKeysAsPSS: treatAsPSS))
        let signature = try signer.signature(for: F.tokenMessage)
        let result = try opensslVerify(signature: signature) { message, signature in
            ["dgst", "-sha256", "-verify", F.path(publicName)] + sigopts + ["-signature", signature, message]
        }
        #expect(result.status == 0, "\(result.errorText)")
        #expect(String(decoding: result.output, as: UTF8.self).contains("Verified OK"))

        // And openssl refuses a tampered one, so the check above can fail.
        var tampered = signature
        tampered[tampered.count - 1] ^= 0x01
        let refused = try opensslVerify(signature: tampered) { message, signature in
            ["dgst", "-sha256", "-verify", F.path(publicName)] + sigopts + ["-signature", signature, message]
        }
        #expect(refused.status != 0)
    }

    @Test func libraryEd25519SignatureVerifiesWithOpenSSL() throws {
        let signature = try F.signingKey("test-ed25519.pem").signature(for: F.tokenMessage)
        let result = try opensslVerify(signature: signature) { message, signature in
            [
                "pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", F.path("test-ed25519.pub.pem"),
                "-in", message, "-sigfile", signature,
            ]
        }
        #expect(result.status == 0, "\(result.errorText)")
        #expect(String(decoding: result.output, as: UTF8.self).contains("Signature Verified Successfully"))
    }

    /// Ed25519 is deterministic: the library and the CLI produce the same bytes.
    @Test func ed25519SignaturesAreIdentical() throws {
        let library = try F.signingKey("test-ed25519.pem").signature(for: F.tokenMessage)
        let cli = try opensslSignature { message, signature in
            ["pkeyutl", "-sign", "-rawin", "-inkey", F.path("test-ed25519.pem"), "-in", message, "-out", signature]
        }
        #expect(library == cli)
    }

    /// RSA PKCS#1 v1.5 is deterministic too.
    @Test func rsaPKCS1SignaturesAreIdentical() throws {
        let library = try F.signingKey("test-rsa2048.pem").signature(for: F.tokenMessage)
        let cli = try opensslSignature { message, signature in
            ["dgst", "-sha256", "-sign", F.path("test-rsa2048.pem"), "-out", signature, message]
        }
        #expect(library == cli)
    }
}
