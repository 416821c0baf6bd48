import Crypto

/// SHA-256 over any byte collection without copying it first when its storage
/// is contiguous (a `String`'s UTF-8, an array slice): the request path hashes
/// the token as sent for the verdict cache key. The log's token id reuses the
/// verifier's digest of the signed bytes (`Verdict.identity`) and hashes them
/// here only when the verifier made none.
enum Digest {
    static func sha256(_ bytes: some Collection<UInt8>) -> SHA256.Digest {
        var hasher = SHA256()
        update(&hasher, bytes)
        return hasher.finalize()
    }

    static func update(_ hasher: inout SHA256, _ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            hasher.update(bufferPointer: UnsafeRawBufferPointer(buffer))
        }
        if done == nil { hasher.update(data: Array(bytes)) }
    }

    /// Hashes a length before the bytes, so that two fields hashed one after
    /// the other cannot be confused (`ab`+`c` vs `a`+`bc`).
    static func updateFramed(_ hasher: inout SHA256, _ bytes: some Collection<UInt8>) {
        var length = UInt64(bytes.count).bigEndian
        withUnsafeBytes(of: &length) { hasher.update(bufferPointer: $0) }
        update(&hasher, bytes)
    }

    /// An optional text: a marker byte (absent, present), then the framed bytes.
    static func updateFramed(_ hasher: inout SHA256, _ text: String?) {
        var marker: UInt8 = text == nil ? 0 : 1
        withUnsafeBytes(of: &marker) { hasher.update(bufferPointer: $0) }
        if let text { updateFramed(&hasher, text.utf8) }
    }

    /// The digest as four words, for a compact hash key.
    static func words(_ digest: SHA256.Digest) -> (UInt64, UInt64, UInt64, UInt64) {
        digest.withUnsafeBytes { raw in
            (
                raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
            )
        }
    }

    /// The token id of logs (docs/DESIGN.md#operators): the first 12 hex digits of the SHA-256
    /// of the signed bytes. Enough to find one token among many; useless for
    /// rebuilding or replaying it. For a verdict without an identity only.
    static func tokenID(signedBytes: some Collection<UInt8>) -> String {
        tokenID(digest: sha256(signedBytes))
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
