import Foundation
import Testing

@testable import EntitlementTokens

/// The playback session credential, the one format the gate issues and
/// checks and `tokeninspect har` verifies: its layout, its tag, what it
/// binds, and the secret files it is read with.
@Suite struct PlaybackSessionTests {
    static let secret = Array(repeating: UInt8(ascii: "k"), count: 32)
    static let expires = TokenTimestamp(millisecondsSince1970: 1_768_478_460_000)!

    static func issue(_ secrets: PlaybackSessionSecrets, resource: String? = "TNT", device: String? = nil) -> String {
        secrets.issue(resource: resource, deviceID: device, requestor: "TNT", keyID: 0x0102_0304_0506_0708, expires: expires)
    }

    @Test func theLayoutIsVersionExpiryBindingsKeyAndTag() throws {
        let secrets = try PlaybackSessionSecrets(secrets: [Self.secret])
        let text = Self.issue(secrets, device: "device-1")
        #expect(text.utf8.count == PlaybackSessionSecrets.textLength && text.utf8.count == 194)
        let bytes = try #require(Base64URL.decode(Array(text.utf8)))
        #expect(bytes.count == 145 && bytes[0] == 2)
        #expect(bytes[1..<9].reduce(Int64(0)) { $0 << 8 | Int64($1) } == Self.expires.millisecondsSince1970)
        #expect(Array(bytes[9..<41]) == SHA256Hasher.hash("TNT".utf8).bytes)
        #expect(Array(bytes[41..<73]) == SHA256Hasher.hash("device-1".utf8).bytes)
        #expect(Array(bytes[105..<113]) == [1, 2, 3, 4, 5, 6, 7, 8])
        // The tag is HMAC-SHA256 over the 113 bytes before it, by OpenSSL's one-shot HMAC (another path than the key's).
        #expect(Array(bytes[113...]) == ForeignDigest.sha256.hmac(key: Self.secret, message: Array(bytes[..<113])))
    }

    @Test func openGivesWhatItBinds() throws {
        let secrets = try PlaybackSessionSecrets(secrets: [Self.secret])
        let session = try secrets.open(Self.issue(secrets)[...].utf8).get()
        #expect(session.expires == Self.expires)
        #expect(session.isBound(toResource: "TNT") && !session.isBound(toResource: "CNN") && !session.isBound(toResource: nil))
        #expect(session.isResourceBound && !session.isDeviceBound && session.isRequestorBound)
        #expect(session.isBound(toRequestor: "TNT") && session.keyID == 0x0102_0304_0506_0708)
        let unbound = try secrets.open(Self.issue(secrets, resource: nil)[...].utf8).get()
        #expect(!unbound.isResourceBound && unbound.isBound(toResource: nil))
    }

    @Test func openRefusesWithAReasonForEachFailure() throws {
        let secrets = try PlaybackSessionSecrets(secrets: [Self.secret])
        var bytes = try #require(Base64URL.decode(Array(Self.issue(secrets).utf8)))
        bytes[120] ^= 0x01
        #expect(secrets.open(Base64URL.encode(bytes)[...].utf8) == .failure(.badTag))
        #expect(secrets.open("not a credential"[...].utf8) == .failure(.malformed))
        bytes[0] = 3
        #expect(secrets.open(Base64URL.encode(bytes)[...].utf8) == .failure(.unknownVersion(3)))
        let versionOne = Base64URL.encode([1] + Array(repeating: 0, count: 104))
        #expect(secrets.open(versionOne[...].utf8) == .failure(.oldVersion))
        #expect(PlaybackSessionRefusal.oldVersion.reason == "session credential version 1 is no longer accepted; start playback again")
        let other = try PlaybackSessionSecrets(secrets: [Array(repeating: UInt8(ascii: "o"), count: 32)])
        #expect(other.open(Self.issue(secrets)[...].utf8) == .failure(.badTag))
        // Rotation: the first secret signs, every one verifies.
        let rotated = try PlaybackSessionSecrets(secrets: [Array(repeating: UInt8(ascii: "o"), count: 32), Self.secret])
        #expect((try? rotated.open(Self.issue(secrets)[...].utf8).get()) != nil)
        #expect(secrets.open(Self.issue(rotated)[...].utf8) == .failure(.badTag))
    }

    @Test func checkIsTheGatesRuleInItsOrder() throws {
        let secrets = try PlaybackSessionSecrets(secrets: [Self.secret])
        let text = Self.issue(secrets, device: "d")
        func check(
            resource: String? = "TNT",
            device: String? = "d",
            requestor: String? = "TNT",
            at offset: Int64 = 0,
            trusted: Bool = true
        )
            -> PlaybackSessionSecrets.Check
        {
            secrets.check(
                text[...].utf8,
                against: .init(resource: resource, deviceID: device, requestor: requestor, now: Self.expires.adding(milliseconds: offset)!),
                trusts: { _ in trusted }
            )
        }
        #expect(check() == .valid(expires: Self.expires))
        #expect(check(at: 1) == .expired)
        #expect(check(resource: "CNN", at: 1) == .invalid("the session was made for another resource"))
        #expect(check(requestor: "CNN") == .invalid("the session was made for another requestor"))
        #expect(check(trusted: false) == .invalid("the key that admitted this session was removed"))
        #expect(check(device: "e") == .deviceMismatch("the session is bound to another device"))
        #expect(check(device: nil) == .deviceMismatch("the session is bound to a device; the request names none"))
    }

    @Test func secretsAreAtLeast32BytesAndFilesFollowTheSecretFileRule() throws {
        #expect(throws: PlaybackSessionSecretError.tooShort) { try PlaybackSessionSecrets(secrets: [Array(repeating: 1, count: 31)]) }
        #expect(throws: PlaybackSessionSecretError.noSecret) { try PlaybackSessionSecrets(secrets: []) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sessions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = directory.appendingPathComponent("text").path
        try #require(FileManager.default.createFile(atPath: text, contents: Data(Self.secret + [0x0A])))
        let loaded = try PlaybackSessionSecrets.load(paths: [text])
        // The text file's trailing newline is not part of the secret: a session of the bare secret opens.
        let bare = try PlaybackSessionSecrets(secrets: [Self.secret])
        #expect((try? loaded.open(Self.issue(bare)[...].utf8).get()) != nil)
        let short = directory.appendingPathComponent("short").path
        try #require(FileManager.default.createFile(atPath: short, contents: Data((String(repeating: "x", count: 31) + "\n").utf8)))
        #expect(throws: PlaybackSessionSecretError.fileTooShort(path: short, fileBytes: 32, usedBytes: 31)) {
            try PlaybackSessionSecrets.load(paths: [short])
        }
        #expect(throws: PlaybackSessionSecretError.unreadable(path: directory.path)) { try PlaybackSessionSecrets.load(paths: [directory.path]) }
        #expect(throws: PlaybackSessionSecretError.unreadable(path: "/dev/zero")) { try PlaybackSessionSecrets.load(paths: ["/dev/zero"]) }
        let large = directory.appendingPathComponent("large").path
        try #require(FileManager.default.createFile(atPath: large, contents: Data(Array(repeating: 0x41, count: 4097))))
        #expect(throws: PlaybackSessionSecretError.unreadable(path: large)) { try PlaybackSessionSecrets.load(paths: [large]) }
    }
}
