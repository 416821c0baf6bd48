import EntitlementTokens
import FoundationEssentials

/// Playback sessions (docs/DESIGN.md#playback-sessions): after one valid (one-time) media token, the
/// playlist and segments of that resource are let through on a stateless
/// credential, without touching the replay store.
///
/// The credential (version 2) is the Base64url (no padding) of
///
/// | bytes | what |
/// |---|---|
/// | 1 | version, 2 |
/// | 8 | expiry, milliseconds since 1970, big-endian |
/// | 32 | SHA-256 of the expected resource of the request that made it (zeros when the gate checks no resource) |
/// | 32 | SHA-256 of the device id of that request (zeros when it gave none: any device) |
/// | 32 | SHA-256 of the gate's configured requestor (zeros under `--allow-any-requestor`) |
/// | 8 | the key that admitted the session: the first 8 bytes of the SHA-256 of its SubjectPublicKeyInfo |
/// | 32 | HMAC-SHA256 of the 113 bytes above, with the first secret |
///
/// The requestor binding keeps a gate of another requestor that shares the
/// secret from honouring the session; the key binding ends the session when
/// its key leaves the ring (docs/DESIGN.md#revocation-is-exact). Every secret verifies
/// (rotation: add the new secret first, drop the old one after a lifetime);
/// tags are compared in constant time. Version 1 (no requestor, no key) is
/// refused with a reason that tells the player to start again.
struct PlaybackSessions: Sendable {
    enum Check: Sendable, Equatable {
        case valid(expires: TokenTimestamp)
        /// Genuine but past its expiry: 401 `SESSION_EXPIRED`.
        case expired
        /// Genuine, bound to another device or to a device while the request
        /// names none: 403 `DEVICE_MISMATCH`.
        case deviceMismatch(String)
        /// Bad tag, malformed, old version, another resource or requestor, or
        /// a key that left the ring: 403 `INVALID_SESSION`.
        case invalid(String)
    }

    /// What a credential is checked against: the request and the gate.
    struct Expectation: Sendable {
        var resource: String?
        var deviceID: String?
        /// The gate's configured requestor (nil: any requestor).
        var requestor: String?
        /// A device-bound session passes a request that names no device.
        var allowsUnboundDevice = false
        var now: TokenTimestamp

        init(
            resource: String?,
            deviceID: String?,
            requestor: String?,
            allowsUnboundDevice: Bool = false,
            now: TokenTimestamp
        ) {
            self.resource = resource
            self.deviceID = deviceID
            self.requestor = requestor
            self.allowsUnboundDevice = allowsUnboundDevice
            self.now = now
        }
    }

    static let version: UInt8 = 2
    static let signedLength = 1 + 8 + 32 + 32 + 32 + 8
    static let credentialLength = signedLength + 32
    static let textLength = (credentialLength * 4 + 2) / 3
    /// Version 1's layout (version, expiry, resource, device, tag), recognised only to name it.
    static let versionOneLength = 1 + 8 + 32 + 32 + 32
    /// Shorter secrets are guessable offline from one captured credential.
    static let minimumSecretBytes = SecretFileBytes.minimumCount
    /// A secret file larger than this is not a secret (a key or a log given by mistake).
    static let maximumSecretFileBytes = 4096

    /// One HMAC-SHA256 per secret, its key already absorbed (RFC 2104's inner and
    /// outer pads hashed once, here), so a request sets up no key. The newest
    /// secret is first; it signs, all of them verify.
    private let authenticators: [HMACSHA256Key]
    let lifetimeMilliseconds: Int64

    init(secrets: [[UInt8]], lifetimeSeconds: Int) throws(GateConfigurationError) {
        guard !secrets.isEmpty else { throw GateConfigurationError("no session secret") }
        for secret in secrets where secret.count < Self.minimumSecretBytes {
            throw GateConfigurationError("a session secret must hold at least \(Self.minimumSecretBytes) bytes (e.g. `openssl rand -hex 32`)")
        }
        authenticators = secrets.map(HMACSHA256Key.init)
        lifetimeMilliseconds = Int64(lifetimeSeconds) * 1000
    }

    /// Reads each `--session-secret` file whole, by the secret-file
    /// rule: binary content is used as it is; text (printable ASCII) loses
    /// one trailing newline (`\n` or `\r\n`, what `echo` and editors add).
    /// A random 32-byte file whose last byte happens to be 0x0A is binary and
    /// keeps all 32 bytes.
    static func load(paths: [String], lifetimeSeconds: Int) throws(GateConfigurationError) -> PlaybackSessions {
        var secrets: [[UInt8]] = []
        for path in paths {
            let type = (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
            guard type == .typeRegular, let data = FileManager.default.contents(atPath: path), data.count <= maximumSecretFileBytes else {
                // A relative path was not resolved under $CREDENTIALS_DIRECTORY (unset): say where it was looked for.
                let looked =
                    path.hasPrefix("/")
                    ? ""
                    : " (looked for in the working directory \(FileManager.default.currentDirectoryPath); under systemd a relative path is read from $CREDENTIALS_DIRECTORY)"
                throw GateConfigurationError("--session-secret \(path): not a readable regular file of at most 4 KiB\(looked)")
            }
            let bytes = SecretFileBytes.secret(of: [UInt8](data))
            guard bytes.count >= minimumSecretBytes else {
                throw GateConfigurationError(
                    "--session-secret \(path): the file holds \(data.count) bytes, of which \(bytes.count) are used "
                        + "(a text file loses its trailing newline); at least \(minimumSecretBytes) are needed (e.g. `openssl rand -hex 32 > \(path)`)"
                )
            }
            secrets.append(bytes)
        }
        return try PlaybackSessions(secrets: secrets, lifetimeSeconds: lifetimeSeconds)
    }

    /// The 8-byte id a credential records of the key that admitted it.
    static func keyID(of key: PublicKey) -> UInt64 {
        SHA256Hasher.hash(key.derRepresentation).bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// A credential for `resource` (nil: the gate checks no resource), the
    /// device that asked, the gate's requestor and the key that verified the
    /// media token, valid from `now` for the lifetime.
    func issue(
        resource: String?,
        deviceID: String?,
        requestor: String?,
        keyID: UInt64,
        now: TokenTimestamp
    ) -> (credential: String, expires: TokenTimestamp) {
        let expires = now.adding(milliseconds: lifetimeMilliseconds) ?? .latest
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.credentialLength)
        bytes.append(Self.version)
        Self.appendBigEndian(UInt64(bitPattern: expires.millisecondsSince1970), to: &bytes)
        bytes += Self.binding(resource)
        bytes += Self.binding(deviceID)
        bytes += Self.binding(requestor)
        Self.appendBigEndian(keyID, to: &bytes)
        bytes += authenticators[0].authenticationCode(for: bytes).bytes
        return (Base64URL.encode(bytes.span), expires)
    }

    /// Whether `credential` lets this request through; `trusts` says whether
    /// a key id is in the ring now.
    func check(
        _ credential: Substring.UTF8View,
        against expectation: Expectation,
        trusts: (UInt64) -> Bool
    ) -> Check {
        if credential.count == (Self.versionOneLength * 4 + 2) / 3, let old = Base64URL.decode(credential.span),
            old.count == Self.versionOneLength, old[0] == 1
        {
            return .invalid("session credential version 1 is no longer accepted; start playback again")
        }
        guard credential.count == Self.textLength, let bytes = Base64URL.decode(credential.span),
            bytes.count == Self.credentialLength
        else {
            return .invalid("the session credential is malformed")
        }
        guard bytes[0] == Self.version else { return .invalid("unknown session credential version \(bytes[0])") }
        let signed = bytes[..<Self.signedLength]
        let tag = bytes[Self.signedLength...]
        // Each tag is compared in constant time (`CRYPTO_memcmp`).
        guard authenticators.contains(where: { $0.isValid(tag, for: signed) }) else {
            return .invalid("the session credential's tag does not verify")
        }
        guard constantTimeEquals(bytes[73..<105], Self.binding(expectation.requestor)) else {
            return .invalid("the session was made for another requestor")
        }
        guard constantTimeEquals(bytes[9..<41], Self.binding(expectation.resource)) else {
            return .invalid("the session was made for another resource")
        }
        let keyID = bytes[105..<113].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard trusts(keyID) else {
            return .invalid("the key that admitted this session was removed")
        }
        let device = bytes[41..<73]
        if device.contains(where: { $0 != 0 }) {
            if let deviceID = expectation.deviceID {
                guard constantTimeEquals(device, Self.binding(deviceID)) else {
                    return .deviceMismatch("the session is bound to another device")
                }
            } else if !expectation.allowsUnboundDevice {
                return .deviceMismatch("the session is bound to a device; the request names none")
            }
        }
        let expiry = bytes[1..<9].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        guard let expires = TokenTimestamp(millisecondsSince1970: expiry) else {
            return .invalid("the session credential's expiry is out of range")
        }
        guard expectation.now <= expires else { return .expired }
        return .valid(expires: expires)
    }

    private static func appendBigEndian(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// SHA-256 of the value, or 32 zeros when there is none.
    static func binding(_ value: String?) -> [UInt8] {
        guard let value else { return [UInt8](repeating: 0, count: 32) }
        return SHA256Hasher.hash(value.utf8).bytes
    }

    private func constantTimeEquals(_ lhs: ArraySlice<UInt8>, _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(lhs, rhs) { difference |= a ^ b }
        return difference == 0
    }
}
