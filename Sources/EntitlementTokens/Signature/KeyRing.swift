/// The set of trusted public keys a verifier accepts.
///
/// Several keys are trusted at once so that an issuer can rotate: tokens
/// signed with the old key and with the new one both verify during the
/// overlap (SPEC §3). The ring tries its keys in order and answers with the
/// first that verifies, so a caller can log which key signed.
public struct KeyRing: Sendable {
    /// The trusted keys, in the order they were given or loaded.
    public let keys: [PublicKey]
    /// What ``load(paths:options:now:)`` skipped or found doubtful (a README
    /// or private key in a key directory, an expired certificate), in the
    /// order met; empty for a ring made from keys. For the operator's log.
    public let notices: [KeyLoadNotice]

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
    public func verifyingKey(for signature: [UInt8], message: UnsafeRawBufferPointer) -> PublicKey? {
        signature.withUnsafeBytes { signature in
            var digest = SignedMessageDigest()
            return keys.first { $0.isValidSignature(signature, for: message, digest: &digest) }
        }
    }

    /// Convenience for a message held in an array.
    public func verifyingKey(for signature: [UInt8], message: [UInt8]) -> PublicKey? {
        message.withUnsafeBytes { verifyingKey(for: signature, message: $0) }
    }
}
