import EntitlementTokens
import Foundation
import Testing
@testable import TokenGate

@Suite struct PlaybackSessionTests {
    let secretA = Array(repeating: UInt8(ascii: "a"), count: 32)
    let secretB = Array(repeating: UInt8(ascii: "b"), count: 40)
    let now = GateFixtures.issued

    func sessions(_ secrets: [[UInt8]], lifetime: Int = 60) -> PlaybackSessions {
        try! PlaybackSessions(secrets: secrets, lifetimeSeconds: lifetime)
    }

    @Test func aCredentialIsValidForItsResourceAndDeviceUntilItExpires() {
        let gate = sessions([secretA])
        let (credential, expires) = gate.issue(resource: "TNT", deviceID: "device-1", now: now)
        #expect(credential.utf8.count == 140)
        #expect(credential.utf8.allSatisfy { $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") })
        #expect(expires == now.adding(milliseconds: 60_000))
        #expect(gate.check(credential.utf8, resource: "TNT", deviceID: "device-1", now: now) == .valid(expires: expires))
        #expect(gate.check(credential.utf8, resource: "TNT", deviceID: "device-1", now: expires) == .valid(expires: expires))
        #expect(gate.check(credential.utf8, resource: "TNT", deviceID: "device-1", now: expires.adding(milliseconds: 1)!) == .expired)
    }

    @Test func anotherResourceOrDeviceIsInvalid() {
        let gate = sessions([secretA])
        let credential = gate.issue(resource: "TNT", deviceID: "device-1", now: now).credential
        #expect(gate.check(credential.utf8, resource: "CNN", deviceID: "device-1", now: now) == .invalid("the session was made for another resource"))
        #expect(gate.check(credential.utf8, resource: "TNT", deviceID: "device-2", now: now) == .invalid("the session was made for another device"))
        #expect(gate.check(credential.utf8, resource: "TNT", deviceID: nil, now: now) == .invalid("the session was made for another device"))
        // An expired credential for another resource is refused, not "expired".
        #expect(gate.check(credential.utf8, resource: "CNN", deviceID: "device-1", now: now.adding(milliseconds: 3_600_000)!)
                == .invalid("the session was made for another resource"))
    }

    @Test func aCredentialMadeWithoutADeviceServesAnyDevice() {
        let gate = sessions([secretA])
        let credential = gate.issue(resource: "TNT", deviceID: nil, now: now).credential
        if case .valid = gate.check(credential.utf8, resource: "TNT", deviceID: "any", now: now) {} else { Issue.record("refused") }
    }

    @Test func rotationTheFirstSecretSignsEveryOneVerifies() {
        let old = sessions([secretA])
        let rotated = sessions([secretB, secretA])
        let fromOld = old.issue(resource: "TNT", deviceID: nil, now: now).credential
        let fromNew = rotated.issue(resource: "TNT", deviceID: nil, now: now).credential
        if case .valid = rotated.check(fromOld.utf8, resource: "TNT", deviceID: nil, now: now) {} else { Issue.record("old refused") }
        #expect(old.check(fromNew.utf8, resource: "TNT", deviceID: nil, now: now) == .invalid("the session credential's tag does not verify"))
        #expect(sessions([secretB]).check(fromOld.utf8, resource: "TNT", deviceID: nil, now: now)
                == .invalid("the session credential's tag does not verify"))
    }

    @Test func everyFlippedBitIsRefused() {
        let gate = sessions([secretA])
        let credential = Array(gate.issue(resource: "TNT", deviceID: "d", now: now).credential.utf8)
        let decoded = Base64URL.decode(credential)!
        for index in decoded.indices {
            for bit in 0..<8 {
                var forged = decoded
                forged[index] ^= 1 << bit
                let result = gate.check(Base64URL.encode(forged).utf8, resource: "TNT", deviceID: "d", now: now)
                guard case .invalid = result else {
                    Issue.record("bit \(bit) of byte \(index) flipped: \(result)")
                    return
                }
            }
        }
    }

    @Test(arguments: ["", "x", String(repeating: "A", count: 139), String(repeating: "A", count: 141), String(repeating: "=", count: 140),
                      String(repeating: "+", count: 140)])
    func malformedCredentialsAreInvalid(_ text: String) {
        guard case .invalid = sessions([secretA]).check(text.utf8, resource: "TNT", deviceID: nil, now: now) else {
            Issue.record("accepted \(text)")
            return
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
        #expect(Base64URL.decode(Array("AB".utf8)) == nil)   // leftover bits not zero
        #expect(Base64URL.decode(Array("AA==".utf8)) == nil)
        #expect(Base64URL.decode(Array("A".utf8)) == nil)
        #expect(Base64URL.decode(Array("a+b/".utf8)) == nil)
    }
}
