import EntitlementTokens
import Foundation
import Testing

@testable import GateTestSupport
@testable import TokenGate

@Suite struct PlaybackSessionTests {
    let secretA = Array(repeating: UInt8(ascii: "a"), count: 32)
    let secretB = Array(repeating: UInt8(ascii: "b"), count: 40)
    let now = GateFixtures.issued
    let keyA: UInt64 = 0x0123_4567_89AB_CDEF
    let keyB: UInt64 = 0x0FED_CBA9_8765_4321

    func sessions(_ secrets: [[UInt8]], lifetime: Int = 60) -> PlaybackSessions {
        try! PlaybackSessions(secrets: secrets, lifetimeSeconds: lifetime)
    }

    func issue(
        _ gate: PlaybackSessions,
        resource: String? = "TNT",
        deviceID: String?,
        requestor: String? = "TNT"
    ) -> (credential: String, expires: TokenTimestamp) {
        gate.issue(resource: resource, deviceID: deviceID, requestor: .init(requestor), keyID: keyA, now: now)
    }

    func check(
        _ gate: PlaybackSessions,
        _ credential: String,
        resource: String? = "TNT",
        deviceID: String?,
        requestor: String? = "TNT",
        unbound: Bool = false,
        at time: TokenTimestamp? = nil,
        keys: Set<UInt64>? = nil
    ) -> PlaybackSessions.Check {
        let trusted = keys ?? [keyA]
        return gate.check(
            credential[...].utf8,
            against: .init(
                resource: resource,
                deviceID: deviceID,
                requestor: requestor,
                allowsUnboundDevice: unbound,
                now: time ?? now
            ),
            trusts: { trusted.contains($0) }
        )
    }

    @Test func aCredentialIsValidForItsResourceAndDeviceUntilItExpires() {
        let gate = sessions([secretA])
        let (credential, expires) = issue(gate, deviceID: "device-1")
        #expect(credential.utf8.count == 194)
        #expect(credential.utf8.allSatisfy { $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") })
        #expect(expires == now.adding(milliseconds: 60_000))
        #expect(check(gate, credential, deviceID: "device-1") == .valid(expires: expires))
        #expect(check(gate, credential, deviceID: "device-1", at: expires) == .valid(expires: expires))
        #expect(check(gate, credential, deviceID: "device-1", at: expires.adding(milliseconds: 1)!) == .expired)
    }

    @Test func anotherResourceRequestorOrDeviceIsRefused() {
        let gate = sessions([secretA])
        let credential = issue(gate, deviceID: "device-1").credential
        #expect(check(gate, credential, resource: "CNN", deviceID: "device-1") == .invalid("the session was made for another resource"))
        #expect(check(gate, credential, deviceID: "device-1", requestor: "CNN") == .invalid("the session was made for another requestor"))
        #expect(check(gate, credential, deviceID: "device-1", requestor: nil) == .invalid("the session was made for another requestor"))
        #expect(check(gate, credential, deviceID: "device-2") == .deviceMismatch("the session is bound to another device"))
        #expect(check(gate, credential, deviceID: nil) == .deviceMismatch("the session is bound to a device; the request names none"))
        if case .valid = check(gate, credential, deviceID: nil, unbound: true) {} else { Issue.record("--allow-unbound-device refused") }
        // An expired credential for another resource is refused, not "expired".
        #expect(
            check(gate, credential, resource: "CNN", deviceID: "device-1", at: now.adding(milliseconds: 3_600_000)!)
                == .invalid("the session was made for another resource")
        )
    }

    @Test func aSessionEndsWithTheKeyThatAdmittedIt() {
        let gate = sessions([secretA])
        let credential = issue(gate, deviceID: nil).credential
        if case .valid = check(gate, credential, deviceID: nil, keys: [keyB, keyA]) {} else { Issue.record("refused while its key is trusted") }
        #expect(check(gate, credential, deviceID: nil, keys: [keyB]) == .invalid("the key that admitted this session was removed"))
    }

    @Test func versionOneIsRefusedWithAReasonThatSaysSo() {
        // A version 1 credential as the previous gate issued it: version, expiry, resource, device, HMAC.
        var bytes: [UInt8] = [1] + [0, 0, 1, 0x53, 0x8C, 0, 0, 0]
        bytes += PlaybackSessions.binding("TNT") + PlaybackSessions.binding(nil)
        bytes += ForeignDigest.sha256.hmac(key: secretA, message: bytes)!
        let credential = Base64URL.encode(bytes)
        #expect(credential.utf8.count == 140)
        #expect(
            check(sessions([secretA]), credential, deviceID: nil)
                == .invalid("session credential version 1 is no longer accepted; start playback again")
        )
    }

    @Test func aCredentialMadeWithoutADeviceServesAnyDevice() {
        let gate = sessions([secretA])
        let credential = issue(gate, deviceID: nil).credential
        if case .valid = check(gate, credential, deviceID: "any") {} else { Issue.record("refused") }
    }

    @Test func rotationTheFirstSecretSignsEveryOneVerifies() {
        let old = sessions([secretA])
        let rotated = sessions([secretB, secretA])
        let fromOld = issue(old, deviceID: nil).credential
        let fromNew = issue(rotated, deviceID: nil).credential
        if case .valid = check(rotated, fromOld, deviceID: nil) {} else { Issue.record("old refused") }
        #expect(check(old, fromNew, deviceID: nil) == .invalid("the session credential's tag does not verify"))
        #expect(check(sessions([secretB]), fromOld, deviceID: nil) == .invalid("the session credential's tag does not verify"))
    }

    /// The credential's bytes as docs/DESIGN.md#playback-sessions lays them out, made
    /// here from other primitives: OpenSSL's EVP SHA-256, HMAC by RFC 2104's
    /// definition over it, Foundation's Base64; and the key id from the key's DER.
    @Test func aCredentialIsTheDocumentedLayoutByteForByte() throws {
        let sha256 = { (bytes: [UInt8]) in ForeignDigest.sha256.digest(of: bytes)! }
        let key = try #require(
            try PublicKey.keys(from: [UInt8](FileManager.default.contents(atPath: GateFixtures.publicKey)!), source: "a.pem").first
        )
        let keyID = PlaybackSessions.keyID(of: key)
        #expect(keyID == sha256(key.derRepresentation).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        for (resource, deviceID, requestor) in [("TNT", "device-1", "REQ"), (nil, nil, nil), ("R", nil, "TNT")] as [(String?, String?, String?)] {
            let (credential, expires) = sessions([secretB]).issue(
                resource: resource,
                deviceID: deviceID,
                requestor: .init(requestor),
                keyID: keyID,
                now: now
            )
            let bigEndian = { (value: UInt64) in (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }
            let binding = { (value: String?) in value.map { sha256(Array($0.utf8)) } ?? [UInt8](repeating: 0, count: 32) }
            var bytes: [UInt8] = [2] + bigEndian(UInt64(expires.millisecondsSince1970))
            bytes += binding(resource) + binding(deviceID) + binding(requestor) + bigEndian(keyID)
            let block = secretB + [UInt8](repeating: 0, count: 64 - secretB.count)
            bytes += sha256(block.map { $0 ^ 0x5C } + sha256(block.map { $0 ^ 0x36 } + bytes))
            let text = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(credential == text, "\(resource ?? "-") \(deviceID ?? "-") \(requestor ?? "-")")
        }
    }

    @Test func everyFlippedBitIsRefused() {
        let gate = sessions([secretA])
        let credential = Array(issue(gate, deviceID: "d").credential.utf8)
        let decoded = Base64URL.decode(credential)!
        for index in decoded.indices {
            for bit in 0..<8 {
                var forged = decoded
                forged[index] ^= 1 << bit
                let result = check(gate, Base64URL.encode(forged), deviceID: "d")
                guard case .invalid = result else {
                    Issue.record("bit \(bit) of byte \(index) flipped: \(result)")
                    return
                }
            }
        }
    }

    @Test(arguments: [
        "", "x", String(repeating: "A", count: 193), String(repeating: "A", count: 195), String(repeating: "=", count: 194),
        String(repeating: "+", count: 194), String(repeating: "A", count: 140),
    ])
    func malformedCredentialsAreInvalid(_ text: String) {
        guard case .invalid = check(sessions([secretA]), text, deviceID: nil) else {
            Issue.record("accepted \(text)")
            return
        }
    }

    /// docs/DESIGN.md#secret-files: a secret file is read whole; only text loses one trailing
    /// newline. One start in 256 of `head -c 32 /dev/urandom > secret` used to
    /// fail, the last random byte being 0x0A.
    @Test func secretFilesFollowTheSecretFileRule() throws {
        var random = (0..<31).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 200) }
        random.append(0x0A)
        #expect(SecretFileBytes.secret(of: random) == random)
        #expect(SecretFileBytes.secret(of: Array("abc\n".utf8)) == Array("abc".utf8))
        #expect(SecretFileBytes.secret(of: Array("abc\r\n".utf8)) == Array("abc".utf8))
        #expect(SecretFileBytes.secret(of: Array("abc\n\n".utf8)) == Array("abc\n\n".utf8))
        #expect(SecretFileBytes.secret(of: Array("abc ".utf8)) == Array("abc ".utf8))
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("random.key").path
        try #require(FileManager.default.createFile(atPath: path, contents: Data(random)))
        _ = try PlaybackSessions.load(paths: [path], lifetimeSeconds: 60)
        let short = GateFixtures.sessionSecret(String(repeating: "x", count: 31), in: directory, name: "short.key")
        do {
            _ = try PlaybackSessions.load(paths: [short], lifetimeSeconds: 60)
            Issue.record("a 31-byte secret was accepted")
        } catch {
            #expect(error.message.contains("holds 32 bytes, of which 31 are used"))
        }
    }

    @Test func shortSecretsAreRefused() throws {
        #expect(throws: GateConfigurationError.self) { try PlaybackSessions(secrets: [Array(repeating: 1, count: 31)], lifetimeSeconds: 60) }
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let short = GateFixtures.sessionSecret("too short", in: directory)
        #expect(throws: GateConfigurationError.self) { try PlaybackSessions.load(paths: [short], lifetimeSeconds: 60) }
        let good = GateFixtures.sessionSecret(in: directory, name: "good.key")
        _ = try PlaybackSessions.load(paths: [good], lifetimeSeconds: 60)
        #expect(throws: GateConfigurationError.self) { try PlaybackSessions.load(paths: ["/dev/zero"], lifetimeSeconds: 60) }
    }

    @Test func base64URLIsStrict() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = Base64URL.encode(bytes)
            #expect(Base64URL.decode(Array(text.utf8)) == bytes)
        }
        #expect(Base64URL.decode(Array("AB".utf8)) == nil)  // leftover bits not zero
        #expect(Base64URL.decode(Array("AA==".utf8)) == nil)
        #expect(Base64URL.decode(Array("A".utf8)) == nil)
        #expect(Base64URL.decode(Array("a+b/".utf8)) == nil)
    }
}
