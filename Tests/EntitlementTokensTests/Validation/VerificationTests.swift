import Foundation
import Testing

@testable import EntitlementTokens

/// docs/DESIGN.md#statuses: every status reachable, in order, with the checks reported.
@Suite struct VerificationTests {
    @Test func aGoodTokenIsValidAndTyped() throws {
        let verdict = Minting.verifier().verify(Minting.token())
        #expect(verdict.status == .validToken)
        #expect(verdict.verified?.key?.algorithm == .rsaPKCS1SHA256)
        #expect(verdict.checksRun == [.format, .signature, .expiry, .issueTime])
        #expect(verdict.checksSkipped.map(\.check) == [.requestor, .resource, .mvpd, .device, .replay])
    }

    @Test func everyStatusIsReachable() {
        let fingerprint = DeviceFingerprint.hash("device-1", hexLength: 64)!
        let strict: (inout Minting.Configuration) -> Void = {
            $0.requestorID = "TNT"
            $0.resourceID = "TNT"
            $0.allowedMVPDs = ["Comcast_SSO"]
            $0.device = .fingerprint(fingerprint)
        }
        func verdict(
            _ request: MintRequest,
            now: TokenTimestamp = Minting.issued,
            ring: KeyRing = Minting.ring("test-rsa2048.pub.pem"),
            _ configure: (inout Minting.Configuration) -> Void = { _ in }
        ) -> VerificationStatus {
            Minting.verifier(ring, now: now) {
                strict(&$0)
                configure(&$0)
            }.verify(Minting.token(request)).status
        }
        var other = Minting.request()
        #expect(verdict(Minting.request(.authorization)) == .validToken)
        #expect(Minting.verifier().verify("garbage").status == .invalidTokenFormat)
        #expect(verdict(Minting.request(), ring: Minting.ring("test-rsa2048-b.pub.pem")) == .invalidSignature)
        #expect(verdict(Minting.request(), now: Minting.at(420_000 + 31_000)) == .tokenExpired)
        #expect(verdict(Minting.request(), now: Minting.at(-31_000)) == .tokenNotYetValid)
        other.requestorID = "CNN"
        #expect(verdict(other) == .invalidRequestorID)
        #expect(verdict(Minting.request(resource: "CNN")) == .invalidResourceID)
        other = Minting.request()
        other.mvpdID = "Evil"
        #expect(verdict(other) == .untrustedMVPD)
        other = Minting.request(.authorization)
        other.fingerprint = DeviceFingerprint.hash("device-2", hexLength: 64)
        #expect(verdict(other) == .deviceMismatch)
        let store = InMemoryReplayStore()
        let verifier = Minting.verifier { $0.replayStore = store }
        let token = Minting.token()
        #expect(verifier.verify(token).status == .validToken)
        #expect(verifier.verify(token).status == .tokenReplayed)
        // Re-encoded, it is still the same token.
        #expect(verifier.verify(Fixtures.base64(token)).status == .tokenReplayed)
    }

    @Test func checksRunInSpecOrderAndTheFirstFailureDecides() {
        // Expired *and* for the wrong resource *and* wrong requestor: expiry comes first.
        var request = Minting.request(resource: "CNN")
        request.requestorID = "CNN"
        let verifier = Minting.verifier(now: Minting.at(3_600_000)) {
            $0.resourceID = "TNT"
            $0.requestorID = "TNT"
        }
        let verdict = verifier.verify(Minting.token(request))
        #expect(verdict.status == .tokenExpired)
        #expect(verdict.checksRun == [.format, .signature, .expiry])
        #expect(verdict.reason.contains("expired 53 min ago"))
        // Bad signature beats everything after it.
        let badSignature = Minting.verifier(Minting.ring("test-rsa2048-b.pub.pem"), now: Minting.at(3_600_000)).verify(Minting.token(request))
        #expect(badSignature.status == .invalidSignature)
        // Requestor before resource.
        let live = Minting.verifier {
            $0.resourceID = "TNT"
            $0.requestorID = "TNT"
        }.verify(Minting.token(request))
        #expect(live.status == .invalidRequestorID)
        #expect(live.verified == nil)
    }

    @Test func flippingAnySingleByteOfTheSignedElementIsRefused() {
        let verifier = Minting.verifier()
        let token = Array(Minting.token().utf8)
        let decoded = try! TokenDecoder().decode(token)
        var invalidSignature = 0
        for index in decoded.frame.tokenElement {
            var tampered = token
            tampered[index] ^= 0x01
            let status = verifier.verify(tampered).status
            #expect(status == .invalidSignature || status == .invalidTokenFormat, "byte \(index)")
            if status == .invalidSignature { invalidSignature += 1 }
        }
        // Most flips still decode; those must all fail the signature.
        #expect(invalidSignature >= 50)  // enough flips still decode to exercise the signature check
    }

    @Test func whitespaceInsideTheElementBreaksTheSignatureButNotOutside() {
        let verifier = Minting.verifier()
        let token = Minting.token()
        let inside = token.replacingOccurrences(of: "<requestorID>", with: "\n  <requestorID>")
        #expect(verifier.verify(inside).status == .invalidSignature)
        #expect(verifier.verify("\n  " + token + "\n").status == .validToken)
    }

    @Test func malformedSignatures() throws {
        let verifier = Minting.verifier()
        let token = Minting.token()
        let decoded = try TokenDecoder().decode(token)
        let element = String(decoding: decoded.signedBytes, as: UTF8.self)
        let signature = decoded.signatureText
        func with(_ text: String) -> Verdict { verifier.verify("<signatureInfo>\(text)<signatureInfo>\(element)") }
        #expect(with(signature).status == .validToken)
        #expect(with(String(signature.dropLast(8))).status == .invalidSignature)
        #expect(with("").status == .invalidSignature)
        #expect(with("").reason.contains("empty"))
        #expect(with("not*base64").status == .invalidSignature)
        #expect(with("not*base64").reason.contains("Base64"))
        let wrapped = stride(from: 0, to: signature.count, by: 64).map { offset -> String in
            let start = signature.index(signature.startIndex, offsetBy: offset)
            return String(signature[start..<(signature.index(start, offsetBy: 64, limitedBy: signature.endIndex) ?? signature.endIndex)])
        }.joined(separator: "\n")
        #expect(with("\n" + wrapped + "\n").status == .validToken)
        // A 128-byte (RSA-1024-sized) signature against RSA-2048 keys says so.
        let short = Base64.encode([UInt8](repeating: 7, count: 128))
        #expect(with(short).reason.contains("RSA-1024-sized"))
    }

    @Test func anRSASignatureCheckedAgainstAnECKeyFails() {
        let verdict = Minting.verifier(Minting.ring("test-p256.pub.pem")).verify(Minting.token())
        #expect(verdict.status == .invalidSignature)
    }

    @Test(arguments: ["test-rsa2048.pem", "test-rsa3072.pem", "test-p256.pem", "test-ed25519.pem", "test-rsapss2048.pem"])
    func everyKeyTypeSignsAndVerifiesTokens(keyName: String) {
        let publicName = keyName.replacingOccurrences(of: ".pem", with: ".pub.pem")
        let token = Minting.token(key: Minting.key(keyName))
        #expect(Minting.verifier(Minting.ring(publicName)).verify(token).status == .validToken)
    }

    @Test func keyRotationAcceptsEitherTrustedKey() {
        let ring = Minting.ring("test-rsa2048.pub.pem", "test-rsa2048-b.pub.pem")
        let verifier = Minting.verifier(ring)
        for name in ["test-rsa2048.pem", "test-rsa2048-b.pem"] {
            let verdict = verifier.verify(Minting.token(key: Minting.key(name)))
            #expect(verdict.status == .validToken)
            #expect(verdict.key?.source.hasSuffix(name.replacingOccurrences(of: ".pem", with: ".pub.pem")) == true)
        }
        #expect(verifier.verify(Minting.token(key: Minting.key("test-rsa3072.pem"))).status == .invalidSignature)
    }

    @Test func rsa1024IsRefusedByDefaultAndAcceptedWithTheInsecureOptIn() {
        #expect(throws: KeyError.self) { try KeyRing.load(paths: [SignatureFixtures.path("test-rsa1024.pub.pem")]) }
        do {
            _ = try KeyRing.load(paths: [SignatureFixtures.path("test-rsa1024.pub.pem")])
        } catch {
            #expect(error.code == .insecureKeySize)
        }
        let options = KeyLoadingOptions(allowsInsecureKeySizes: true)
        let signing = try! SignatureFixtures.signingKey("test-rsa1024.pem", options: options)
        let ring = Minting.ring("test-rsa1024.pub.pem", options: options)
        let token = Minting.token(key: signing)
        #expect(Minting.verifier(ring).verify(token).status == .validToken)
        #expect((try! TokenDecoder().decode(token)).signatureText.count == 172)  // 128 bytes in Base64
    }

    @Test func insecurelySkippingTheSignatureIsReported() {
        let verifier = TokenVerifier(signature: .insecureSkipped, policy: VerificationPolicy(clock: { Minting.issued }))
        let verdict = verifier.verify(Minting.token(key: Minting.key("test-rsa2048-b.pem")))
        #expect(verdict.status == .validToken)
        #expect(verdict.checksSkipped.first?.check == .signature)
        #expect(verdict.verified?.key == nil)
    }
}
