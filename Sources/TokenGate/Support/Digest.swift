import EntitlementTokens

/// SHA-256 for the gate's keys, through the library's OpenSSL: the request
/// path hashes the token as sent for the verdict cache key, in framed fields. The log's token id reuses the
/// verifier's digest of the signed bytes (`Verdict.identity`) and hashes them
/// here only when the verifier made none.
enum Digest {
    /// A SHA-256 digest as an in-process cache's key: four words, hashed and
    /// compared without an array (the verdict cache's, the CAT readings').
    struct Key: Hashable {
        var a: UInt64, b: UInt64, c: UInt64, d: UInt64

        init(_ digest: SHA256Digest) {
            (a, b, c, d) = digest.words
        }
    }

    static func sha256(_ bytes: some Collection<UInt8>) -> SHA256Digest {
        SHA256Hasher.hash(bytes)
    }

    /// Hashes a length before the bytes, so that two fields hashed one after
    /// the other cannot be confused (`ab`+`c` vs `a`+`bc`).
    static func updateFramed(_ hasher: inout SHA256Hasher, _ bytes: some Collection<UInt8>) {
        hasher.update(valueBytesOf: UInt64(bytes.count).bigEndian)
        hasher.update(bytes)
    }

    /// An optional text: a marker byte (absent, present), then the framed bytes.
    static func updateFramed(_ hasher: inout SHA256Hasher, _ text: String?) {
        hasher.update(valueBytesOf: UInt8(text == nil ? 0 : 1))
        if let text { updateFramed(&hasher, text.utf8) }
    }

    /// The token id of logs (docs/DESIGN.md#operators): the first 12 hex digits of the SHA-256
    /// of the signed bytes. Enough to find one token among many; useless for
    /// rebuilding or replaying it. For a verdict without an identity only.
    static func tokenID(signedBytes: some Collection<UInt8>) -> String {
        tokenID(digest: sha256(signedBytes).bytes)
    }

    /// The same id from a digest already made (a replay identity is the SHA-256 of the signed bytes).
    static func tokenID(digest: some Sequence<UInt8>) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(12)
        for byte in digest.prefix(6) {
            output.append(hex[Int(byte >> 4)])
            output.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}
