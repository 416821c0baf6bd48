/// What one request expects of the token it carries: the resource it asks
/// for and the device it comes from. Given to every `verify` call, because a
/// server checks each token against *this* stream and *this* device
/// (docs/DESIGN.md#the-library-api-for-servers); what is the same for every request lives in ``VerificationPolicy``.
///
/// Equality is byte-exact on UTF-8, like every id comparison (docs/DESIGN.md#ids-are-compared-byte-for-byte):
/// `Café` composed and decomposed are different expectations.
public struct RequestExpectations: Sendable, Hashable, CustomStringConvertible {
    /// A bare id or a Media RSS document; matched exactly or Media-RSS-aware.
    /// Nil skips the resource check (and the verdict says so).
    public var resourceID: String?
    /// The device the token must be bound to; nil skips the device check.
    public var device: DeviceExpectation?
    /// The time the request is judged at, for every time check and the
    /// replay store: a server reads its clock once per request and passes
    /// it here, so that a request is judged at one instant however many
    /// checks read it. Nil: the policy's clock, read once per verification.
    public var now: TokenTimestamp?

    /// Expectations for one request; nil skips that check (or, for `now`,
    /// reads the policy's clock).
    public init(resourceID: String? = nil, device: DeviceExpectation? = nil, now: TokenTimestamp? = nil) {
        self.resourceID = resourceID
        self.device = device
        self.now = now
    }

    public static func == (lhs: RequestExpectations, rhs: RequestExpectations) -> Bool {
        ExactText.equal(lhs.resourceID, rhs.resourceID) && lhs.device == rhs.device && lhs.now == rhs.now
    }

    public func hash(into hasher: inout Hasher) {
        ExactText.hash(resourceID, into: &hasher)
        hasher.combine(device)
        hasher.combine(now)
    }

    /// What a verifier's plan depends on: the same checks whatever the time.
    var withoutTime: RequestExpectations {
        var plain = self
        plain.now = nil
        return plain
    }

    public var description: String {
        var parts: [String] = []
        if let resourceID { parts.append("resource \(TerminalText.quoted(resourceID))") }
        if let device { parts.append(device.description) }
        return parts.isEmpty ? "no per-request expectations" : parts.joined(separator: ", ")
    }
}

/// The device a token must be bound to.
public enum DeviceExpectation: Sendable, Hashable, CustomStringConvertible {
    /// Compared with the token's fingerprint as given (hex; case is ignored).
    case fingerprint(String)
    /// Hashed with SHA-256, SHA-1 or MD5 — chosen by the length of the
    /// token's fingerprint (64, 40 or 32 hex digits) — then compared.
    case deviceID(String)

    public static func == (lhs: DeviceExpectation, rhs: DeviceExpectation) -> Bool {
        switch (lhs, rhs) {
        case (.fingerprint(let left), .fingerprint(let right)), (.deviceID(let left), .deviceID(let right)):
            ExactText.equal(left, right)
        default:
            false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .fingerprint(let text):
            hasher.combine(0)
            ExactText.hash(text, into: &hasher)
        case .deviceID(let text):
            hasher.combine(1)
            ExactText.hash(text, into: &hasher)
        }
    }

    /// Never shows the device id itself: it identifies a person's device.
    public var description: String {
        switch self {
        case .fingerprint(let fingerprint): "device fingerprint \(TerminalText.escaped(String(fingerprint.prefix(8))))…"
        case .deviceID: "a device id"
        }
    }
}

/// Ids compared as their UTF-8 bytes (docs/DESIGN.md#ids-are-compared-byte-for-byte): Swift's `String ==` treats
/// canonically equivalent strings as equal, which would let `Café` written
/// two ways, or U+212B and U+00C5, stand for each other.
enum ExactText {
    static func equal(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.elementsEqual(rhs.utf8)
    }

    static func equal(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let left?, let right?): equal(left, right)
        default: false
        }
    }

    static func hash(_ text: String?, into hasher: inout Hasher) {
        guard let text else { return hasher.combine(0 as UInt8) }
        hasher.combine(1 as UInt8)
        for byte in text.utf8 { hasher.combine(byte) }
    }
}
