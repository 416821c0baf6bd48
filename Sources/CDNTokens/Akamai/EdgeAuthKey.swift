import EntitlementTokens

/// An EdgeAuth HMAC key: the hex text an Akamai property's token settings
/// generate (32 hex digits), decoded to bytes as akamai-edgeauth decodes it
/// (`binascii.a2b_hex`). The bytes are never printed.
public struct EdgeAuthKey: Sendable, Hashable, CustomStringConvertible {
    /// Shorter keys are refused: 16 bytes is the least Akamai's settings make.
    public static let minimumByteCount = 16
    /// Far above any real key; bounds what a key file can make us hold.
    public static let maximumByteCount = 256

    let bytes: [UInt8]
    /// The key's HMAC-SHA-256 pads hashed once: the form the gate issues is
    /// signed on every exchange (docs/DESIGN.md#one-crypto-library).
    private let preparedSHA256: HMACSHA256Key

    /// Reads hex text of either case; white space around it (a key file's
    /// final newline) is skipped, white space inside it is not.
    public init(hex text: String) throws(CDNRefusal) {
        let digits = Array(text.utf8).trimmingASCIIWhitespace()
        guard digits.count <= Self.maximumByteCount * 2 else {
            throw .format("an EdgeAuth key of more than \(Self.maximumByteCount) bytes")
        }
        guard digits.count % 2 == 0 else { throw .format("an EdgeAuth key with an odd number of hex digits") }
        guard let bytes = CDNHex.bytes(digits) else { throw .format("an EdgeAuth key that is not hex text") }
        try self.init(bytes: bytes)
    }

    public init(bytes: [UInt8]) throws(CDNRefusal) {
        guard bytes.count >= Self.minimumByteCount, bytes.count <= Self.maximumByteCount else {
            throw .format("an EdgeAuth key of \(bytes.count) bytes (\(Self.minimumByteCount) to \(Self.maximumByteCount))")
        }
        self.bytes = bytes
        preparedSHA256 = HMACSHA256Key(bytes)
    }

    public static func == (left: EdgeAuthKey, right: EdgeAuthKey) -> Bool { left.bytes == right.bytes }

    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// The length only: a key is a secret.
    public var description: String { "EdgeAuthKey(\(bytes.count) bytes)" }

    func hmac(_ message: [UInt8], _ algorithm: EdgeAuthAlgorithm) throws(CDNRefusal) -> [UInt8] {
        if algorithm == .sha256 { return preparedSHA256.authenticationCode(for: message).bytes }
        guard let mac = algorithm.digest.hmac(key: bytes, message: message) else {
            throw .format("OpenSSL could not compute HMAC-\(algorithm.rawValue)")
        }
        return mac
    }
}
