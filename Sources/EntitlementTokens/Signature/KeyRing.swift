/// The set of trusted public keys a verifier accepts.
///
/// Several keys are trusted at once so that an issuer can rotate: tokens
/// signed with the old key and with the new one both verify during the
/// overlap (docs/DESIGN.md#signatures-and-keys). The ring tries its keys in order and answers with the
/// first that verifies, so a caller can log which key signed.
public struct KeyRing: Sendable {
    /// The trusted keys, in the order they were given or loaded.
    public let keys: [PublicKey]
    /// What ``load(paths:options:now:)`` skipped or found doubtful (a README
    /// or private key in a key directory, an expired certificate), in the
    /// order met; empty for a ring made from keys. For the operator's log.
    public let notices: [KeyLoadNotice]

    /// A ring of the given keys, tried in order.
    public init(_ keys: [PublicKey]) {
        self.init(keys: keys, notices: [])
    }

    init(keys: [PublicKey], notices: [KeyLoadNotice]) {
        self.keys = keys
        self.notices = notices
    }

    /// The first trusted key that verifies `signature` over `message`, or nil.
    ///
    /// The message is hashed at most once however many keys are tried.
    /// Keys whose signature length cannot match are skipped without any
    /// OpenSSL call.
    public func verifyingKey(for signature: [UInt8], message: Span<UInt8>) -> PublicKey? {
        var digest = SignedMessageDigest()
        return verifyingKey(for: signature, message: message, digest: &digest)
    }

    /// The same, leaving the message's SHA-256 in `digest` when a key
    /// computed it, for the caller to reuse (the replay identity, the log's id).
    func verifyingKey(for signature: [UInt8], message: Span<UInt8>, digest: inout SignedMessageDigest) -> PublicKey? {
        for key in keys where key.isValidSignature(signature.span, for: message, digest: &digest) {
            return key
        }
        return nil
    }

    /// Convenience for a message held in an array.
    public func verifyingKey(for signature: [UInt8], message: [UInt8]) -> PublicKey? {
        verifyingKey(for: signature, message: message.span)
    }
}
