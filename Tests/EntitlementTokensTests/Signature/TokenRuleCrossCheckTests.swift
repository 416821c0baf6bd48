import Foundation
import Testing

@testable import EntitlementTokens

/// The signed-bytes rule matches standard tools byte for byte: a token whose
/// element was signed by `openssl dgst` verifies, and the bytes the library
/// says it signed verify with `openssl dgst -verify`.
@Suite struct TokenRuleCrossCheckTests {
    static let element = Fixtures.mediaElement(
        requestor: "TNT",
        resourceXML: Fixtures.rssResourceInCDATA,
        issueTime: Minting.issued.formatted(.dashedOffset)
    )

    @Test(arguments: [
        ("test-rsa2048.pem", [String]()), ("test-rsa2048.pem", ["-sigopt", "rsa_padding_mode:pss"]),
        ("test-p256.pem", []),
    ])
    func aTokenSignedByOpenSSLVerifies(key: String, options: [String]) throws {
        let directory = try SignatureFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let message = directory.appendingPathComponent("element.xml")
        try Data(Self.element.utf8).write(to: message)
        let signed = try SignatureFixtures.openssl(["dgst", "-sha256", "-sign", SignatureFixtures.path(key)] + options + [message.path])
        try #require(signed.status == 0, "\(signed.errorText)")
        let token = "<signatureInfo>\(Base64.encode(signed.output))<signatureInfo>\(Self.element)"
        let publicName = key.replacingOccurrences(of: ".pem", with: ".pub.pem")
        let options = KeyLoadingOptions(treatsRSAKeysAsPSS: !options.isEmpty)
        let verifier = Minting.verifier(Minting.ring(publicName, options: options))
        #expect(verifier.verify(token).status == .validToken)
        #expect(verifier.verify(Fixtures.base64(token)).status == .validToken)
    }

    @Test func theBytesTheLibrarySignsVerifyWithOpenSSL() throws {
        let token = Minting.token(Minting.request(resource: Fixtures.rssResource))
        let decoded = try TokenDecoder().decode(token)
        let directory = try SignatureFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let message = directory.appendingPathComponent("signed-bytes")
        let signature = directory.appendingPathComponent("signature")
        try Data(decoded.signedBytes).write(to: message)
        try Data(Base64.decode(Array(decoded.signatureText.utf8), whitespace: .any).bytes).write(to: signature)
        let verified = try SignatureFixtures.openssl([
            "dgst", "-sha256", "-verify", SignatureFixtures.path("test-rsa2048.pub.pem"),
            "-signature", signature.path, message.path,
        ])
        #expect(verified.status == 0, "\(verified.errorText)")
        #expect(String(decoding: verified.output, as: UTF8.self).contains("Verified OK"))
    }
}
