import Crypto
import EntitlementTokens
import Foundation

/// Playback sessions (SPEC §11): after one valid (one-time) media token, the
/// playlist and segments of that resource are let through on a stateless
/// credential, without touching the replay store.
///
/// The credential is the Base64url (no padding) of
///
/// | bytes | what |
/// |---|---|
/// | 1 | version, 1 |
/// | 8 | expiry, milliseconds since 1970, big-endian |
/// | 32 | SHA-256 of the expected resource of the request that made it (zeros when the gate checks no resource) |
/// | 32 | SHA-256 of the device id of that request (zeros when it gave none: any device) |
/// | 32 | HMAC-SHA256 of the 73 bytes above, with the first secret |
///
/// Every secret verifies (rotation: add the new secret first, drop the old
/// one after a lifetime); tags are compared in constant time.
public struct PlaybackSessions: Sendable {
    public enum Check: Sendable, Equatable {
        case valid(expires: TokenTimestamp)
        /// Genuine but past its expiry: 401 `SESSION_EXPIRED`.
        case expired
        /// Bad tag, malformed, another resource or another device: 403 `INVALID_SESSION`.
        case invalid(String)
    }

    static let version: UInt8 = 1
    static let signedLength = 1 + 8 + 32 + 32
    static let credentialLength = signedLength + 32
    /// Shorter secrets are guessable offline from one captured credential.
    public static let minimumSecretBytes = 32

    /// Raw bytes: swift-crypto's `SymmetricKey` is not `Sendable`; a key is made per use (a copy of 32 bytes).
    private let secrets: [[UInt8]]
    public let lifetimeMilliseconds: Int64

    public init(secrets: [[UInt8]], lifetimeSeconds: Int) throws(GateConfigurationError) {
        guard !secrets.isEmpty else { throw GateConfigurationError("no session secret") }
        for secret in secrets where secret.count < Self.minimumSecretBytes {
            throw GateConfigurationError("a session secret must hold at least \(Self.minimumSecretBytes) bytes (e.g. `openssl rand -hex 32`)")
        }
        self.secrets = secrets
        lifetimeMilliseconds = Int64(lifetimeSeconds) * 1000
    }

    /// Reads each `--session-secret` file: its bytes less trailing whitespace
    /// (the newline `echo` and editors add).
    public static func load(paths: [String], lifetimeSeconds: Int) throws(GateConfigurationError) -> PlaybackSessions {
        var secrets: [[UInt8]] = []
        for path in paths {
            let type = (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
            guard type == .typeRegular, let data = FileManager.default.contents(atPath: path), data.count <= 4096 else {
                throw GateConfigurationError("--session-secret \(path): not a readable regular file of at most 4 KiB")
            }
            var bytes = [UInt8](data)
            while let last = bytes.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 { bytes.removeLast() }
            guard bytes.count >= minimumSecretBytes else {
                throw GateConfigurationError("--session-secret \(path): holds \(bytes.count) bytes; at least \(minimumSecretBytes) are needed (e.g. `openssl rand -hex 32 > \(path)`)")
            }
            secrets.append(bytes)
        }
        return try PlaybackSessions(secrets: secrets, lifetimeSeconds: lifetimeSeconds)
    }

    /// A credential for `resource` (nil: the gate checks no resource) and the
    /// device that asked, valid from `now` for the lifetime.
    public func issue(resource: String?, deviceID: String?, now: TokenTimestamp) -> (credential: String, expires: TokenTimestamp) {
        let expires = now.adding(milliseconds: lifetimeMilliseconds) ?? .latest
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.credentialLength)
        bytes.append(Self.version)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: expires.millisecondsSince1970 >> Int64(shift)))
        }
        bytes += Self.binding(resource)
        bytes += Self.binding(deviceID)
        bytes += HMAC<SHA256>.authenticationCode(for: bytes, using: SymmetricKey(data: secrets[0]))
        return (Base64URL.encode(bytes), expires)
    }

    /// Whether `credential` lets this request through.
    public func check(_ credential: some Collection<UInt8>, resource: String?, deviceID: String?, now: TokenTimestamp) -> Check {
        guard credential.count == (Self.credentialLength * 4 + 2) / 3, let bytes = Base64URL.decode(credential),
              bytes.count == Self.credentialLength else {
            return .invalid("the session credential is malformed")
        }
        guard bytes[0] == Self.version else { return .invalid("unknown session credential version \(bytes[0])") }
        let signed = bytes[..<Self.signedLength]
        let tag = bytes[Self.signedLength...]
        // Constant time: swift-crypto's comparison of authentication codes.
        guard secrets.contains(where: { HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: signed, using: SymmetricKey(data: $0)) }) else {
            return .invalid("the session credential's tag does not verify")
        }
        guard constantTimeEquals(bytes[9..<41], Self.binding(resource)) else {
            return .invalid("the session was made for another resource")
        }
        let device = bytes[41..<73]
        if device.contains(where: { $0 != 0 }) {
            guard let deviceID, constantTimeEquals(device, Self.binding(deviceID)) else {
                return .invalid("the session was made for another device")
            }
        }
        let expiry = bytes[1..<9].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        guard let expires = TokenTimestamp(millisecondsSince1970: expiry) else {
            return .invalid("the session credential's expiry is out of range")
        }
        guard now <= expires else { return .expired }
        return .valid(expires: expires)
    }

    /// SHA-256 of the value, or 32 zeros when there is none.
    static func binding(_ value: String?) -> [UInt8] {
        guard let value else { return [UInt8](repeating: 0, count: 32) }
        return Array(SHA256.hash(data: Array(value.utf8)))
    }

    private func constantTimeEquals(_ lhs: ArraySlice<UInt8>, _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(lhs, rhs) { difference |= a ^ b }
        return difference == 0
    }
}
