/// The gate's playback session credential (docs/DESIGN.md#playback-sessions):
/// after one valid (one-time) media token, the playlist and segments of that
/// resource are let through on a stateless credential. This is the one owner
/// of its format: the gate issues and checks sessions with it, and
/// `tokeninspect har` verifies the sessions a capture holds with the same secrets.
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
package struct PlaybackSessionSecrets: Sendable {
    package static let version: UInt8 = 2
    package static let signedLength = 1 + 8 + 32 + 32 + 32 + 8
    package static let credentialLength = signedLength + 32
    package static let textLength = (credentialLength * 4 + 2) / 3
    /// Version 1's layout (version, expiry, resource, device, tag), recognised only to name it.
    package static let versionOneLength = 1 + 8 + 32 + 32 + 32
    /// Shorter secrets are guessable offline from one captured credential.
    package static let minimumSecretBytes = SecretFileBytes.minimumCount
    /// A secret file larger than this is not a secret (a key or a log given by mistake).
    package static let maximumSecretFileBytes = 4096

    /// One HMAC-SHA256 per secret, its key already absorbed (RFC 2104's inner and
    /// outer pads hashed once, here), so a request sets up no key. The newest
    /// secret is first; it signs, all of them verify.
    private let authenticators: [HMACSHA256Key]

    package init(secrets: [[UInt8]]) throws(PlaybackSessionSecretError) {
        guard !secrets.isEmpty else { throw .noSecret }
        for secret in secrets where secret.count < Self.minimumSecretBytes { throw .tooShort }
        authenticators = secrets.map(HMACSHA256Key.init)
    }

    /// Reads each secret file whole, by the secret-file rule
    /// (docs/DESIGN.md#secret-files): binary content is used as it is; text
    /// (printable ASCII) loses one trailing newline (`\n` or `\r\n`, what
    /// `echo` and editors add). A random 32-byte file whose last byte happens
    /// to be 0x0A is binary and keeps all 32 bytes. Paths are taken as given
    /// (``SecretFileBytes/path(_:credentialsDirectory:)`` resolves them first).
    package static func load(paths: [String]) throws(PlaybackSessionSecretError) -> PlaybackSessionSecrets {
        var secrets: [[UInt8]] = []
        for path in paths {
            let contents: LibC.FileContents
            do { contents = try LibC.readRegularFile(atPath: Array(path.utf8CString), byteLimit: maximumSecretFileBytes) } catch {
                throw .unreadable(path: path)
            }
            guard case .bytes(let data) = contents else { throw .unreadable(path: path) }
            let bytes = SecretFileBytes.secret(of: data)
            guard bytes.count >= minimumSecretBytes else { throw .fileTooShort(path: path, fileBytes: data.count, usedBytes: bytes.count) }
            secrets.append(bytes)
        }
        return try PlaybackSessionSecrets(secrets: secrets)
    }

    /// The 8-byte id a credential records of the key that admitted it.
    package static func keyID(of key: PublicKey) -> UInt64 { key.fingerprintPrefix }

    /// A credential for `resource` (nil: the gate checks no resource), the
    /// device that asked, the gate's requestor and the key that verified the
    /// media token, valid until `expires`; signed with the first secret.
    package func issue(resource: String?, deviceID: String?, requestor: String?, keyID: UInt64, expires: TokenTimestamp) -> String {
        issue(resource: resource, deviceID: deviceID, requestor: Binding(requestor), keyID: keyID, expires: expires)
    }

    /// As above, with the requestor's binding made once (a gate has one requestor).
    package func issue(resource: String?, deviceID: String?, requestor: Binding, keyID: UInt64, expires: TokenTimestamp) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.credentialLength)
        bytes.append(Self.version)
        Self.appendBigEndian(UInt64(bitPattern: expires.millisecondsSince1970), to: &bytes)
        Binding(resource).digest.append(to: &bytes)
        Binding(deviceID).digest.append(to: &bytes)
        requestor.digest.append(to: &bytes)
        Self.appendBigEndian(keyID, to: &bytes)
        authenticators[0].authenticationCode(for: bytes).append(to: &bytes)
        return Base64URL.encode(bytes.span)
    }

    /// The credential's fields once its form, version and tag are good; a
    /// reason otherwise. Nothing of what it binds is judged here: that is
    /// ``check(_:against:trusts:)`` for the gate, the capture report for a HAR.
    package func open(_ credential: Substring.UTF8View) -> Result<PlaybackSession, PlaybackSessionRefusal> {
        if credential.count == (Self.versionOneLength * 4 + 2) / 3, let old = Base64URL.decode(credential.span),
            old.count == Self.versionOneLength, old[0] == 1
        {
            return .failure(.oldVersion)
        }
        guard credential.count == Self.textLength, let bytes = Base64URL.decode(credential.span),
            bytes.count == Self.credentialLength
        else {
            return .failure(.malformed)
        }
        guard bytes[0] == Self.version else { return .failure(.unknownVersion(bytes[0])) }
        let signed = bytes[..<Self.signedLength]
        let tag = bytes[Self.signedLength...]
        // Each tag is compared in constant time (`CRYPTO_memcmp`).
        guard authenticators.contains(where: { $0.isValid(tag, for: signed) }) else { return .failure(.badTag) }
        // 32 bytes each, by the length checked above.
        guard let resource = Binding(bytes[9..<41]), let device = Binding(bytes[41..<73]), let requestor = Binding(bytes[73..<105]) else {
            return .failure(.malformed)
        }
        return .success(
            PlaybackSession(
                expiryMilliseconds: bytes[1..<9].reduce(Int64(0)) { $0 << 8 | Int64($1) },
                resource: resource,
                device: device,
                requestor: requestor,
                keyID: bytes[105..<113].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            )
        )
    }

    /// Whether `credential` lets a request through (the gate's rule, in its
    /// order): the tag, the requestor, the resource, the key (`trusts` says
    /// whether a key id is in the ring now), the device, then the expiry; so
    /// an expired credential for another resource is "another resource".
    package func check(_ credential: Substring.UTF8View, against expectation: Expectation, trusts: (UInt64) -> Bool) -> Check {
        let session: PlaybackSession
        switch open(credential) {
        case .success(let opened): session = opened
        case .failure(let refusal): return .invalid(refusal.reason)
        }
        guard session.isBound(toRequestor: expectation.requestorBinding) else { return .invalid("the session was made for another requestor") }
        guard session.isBound(toResource: expectation.resource) else { return .invalid("the session was made for another resource") }
        guard trusts(session.keyID) else { return .invalid("the key that admitted this session was removed") }
        if session.isDeviceBound {
            if let deviceID = expectation.deviceID {
                guard session.isBound(toDevice: deviceID) else { return .deviceMismatch("the session is bound to another device") }
            } else if !expectation.allowsUnboundDevice {
                return .deviceMismatch("the session is bound to a device; the request names none")
            }
        }
        guard let expires = session.expires else { return .invalid("the session credential's expiry is out of range") }
        guard expectation.now <= expires else { return .expired }
        return .valid(expires: expires)
    }

    /// SHA-256 of the value, or 32 zeros when there is none: its ``Binding``'s bytes.
    package static func binding(_ value: String?) -> [UInt8] { Binding(value).digest.bytes }

    private static func appendBigEndian(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

extension PlaybackSessionSecrets {
    /// What ``check(_:against:trusts:)`` decided.
    package enum Check: Sendable, Equatable {
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
    package struct Expectation: Sendable {
        package var resource: String?
        package var deviceID: String?
        /// The binding of the gate's configured requestor (of none: any requestor).
        package var requestorBinding: Binding
        /// A device-bound session passes a request that names no device.
        package var allowsUnboundDevice = false
        package var now: TokenTimestamp

        package init(resource: String?, deviceID: String?, requestor: String?, allowsUnboundDevice: Bool = false, now: TokenTimestamp) {
            self.init(
                resource: resource,
                deviceID: deviceID,
                requestor: Binding(requestor),
                allowsUnboundDevice: allowsUnboundDevice,
                now: now
            )
        }

        /// As above, with the requestor's binding made once.
        package init(resource: String?, deviceID: String?, requestor: Binding, allowsUnboundDevice: Bool = false, now: TokenTimestamp) {
            self.resource = resource
            self.deviceID = deviceID
            requestorBinding = requestor
            self.allowsUnboundDevice = allowsUnboundDevice
            self.now = now
        }
    }

    /// What a credential binds a value to: its SHA-256, or 32 zeros when
    /// there is none. A value, so a credential's bindings allocate nothing.
    package struct Binding: Sendable, Equatable {
        let digest: SHA256Digest

        package init(_ value: String?) {
            digest = value.map { SHA256Hasher.hash($0.utf8) } ?? SHA256Digest()
        }

        /// The binding whose 32 bytes these are, as a credential carries it.
        init?(_ bytes: ArraySlice<UInt8>) {
            guard let digest = SHA256Digest(bytes) else { return nil }
            self.digest = digest
        }

        /// False for the binding of no value.
        var isSet: Bool { digest != SHA256Digest() }

        /// Equality whose time does not depend on where the bindings differ.
        func matches(_ other: Binding) -> Bool {
            let (a, b) = (digest.words, other.digest.words)
            return (a.0 ^ b.0) | (a.1 ^ b.1) | (a.2 ^ b.2) | (a.3 ^ b.3) == 0
        }
    }
}

/// A session credential whose tag verified: what it binds, as hashes (the
/// credential carries no name in the clear), compared in constant time.
package struct PlaybackSession: Sendable, Equatable {
    /// The expiry as written; ``expires`` is nil when it is out of range.
    package let expiryMilliseconds: Int64
    let resource: PlaybackSessionSecrets.Binding
    let device: PlaybackSessionSecrets.Binding
    let requestor: PlaybackSessionSecrets.Binding
    /// The id of the key that admitted it (``PlaybackSessionSecrets/keyID(of:)``).
    package let keyID: UInt64

    package var expires: TokenTimestamp? { TokenTimestamp(millisecondsSince1970: expiryMilliseconds) }
    /// False when the gate that made it checked no resource (`--allow-any-resource`).
    package var isResourceBound: Bool { resource.isSet }
    package var isDeviceBound: Bool { device.isSet }
    package var isRequestorBound: Bool { requestor.isSet }

    /// Whether it was made for `resource` (nil: for no resource).
    package func isBound(toResource resource: String?) -> Bool {
        self.resource.matches(PlaybackSessionSecrets.Binding(resource))
    }

    package func isBound(toDevice deviceID: String?) -> Bool {
        device.matches(PlaybackSessionSecrets.Binding(deviceID))
    }

    package func isBound(toRequestor requestor: String?) -> Bool {
        isBound(toRequestor: PlaybackSessionSecrets.Binding(requestor))
    }

    package func isBound(toRequestor requestor: PlaybackSessionSecrets.Binding) -> Bool {
        self.requestor.matches(requestor)
    }
}

/// Why a credential did not open: its form, its version, or its tag.
package enum PlaybackSessionRefusal: Error, Sendable, Equatable {
    case malformed
    case oldVersion
    case unknownVersion(UInt8)
    case badTag

    package var reason: String {
        switch self {
        case .malformed: "the session credential is malformed"
        case .oldVersion: "session credential version 1 is no longer accepted; start playback again"
        case .unknownVersion(let version): "unknown session credential version \(version)"
        case .badTag: "the session credential's tag does not verify"
        }
    }
}

/// Why the session secrets cannot be used; ``message`` names the option, as
/// the gate and the CLI both call it `--session-secret`.
package enum PlaybackSessionSecretError: Error, Sendable, Equatable {
    case noSecret
    case tooShort
    case unreadable(path: String)
    case fileTooShort(path: String, fileBytes: Int, usedBytes: Int)

    package var message: String {
        let minimum = PlaybackSessionSecrets.minimumSecretBytes
        return switch self {
        case .noSecret: "no session secret"
        case .tooShort: "a session secret must hold at least \(minimum) bytes (e.g. `openssl rand -hex 32`)"
        case .unreadable(let path): "--session-secret \(path): not a readable regular file of at most 4 KiB"
        case .fileTooShort(let path, let fileBytes, let usedBytes):
            "--session-secret \(path): the file holds \(fileBytes) bytes, of which \(usedBytes) are used "
                + "(a text file loses its trailing newline); at least \(minimum) are needed (e.g. `openssl rand -hex 32 > \(path)`)"
        }
    }
}
