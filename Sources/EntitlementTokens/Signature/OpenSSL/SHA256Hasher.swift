internal import COpenSSL

/// A SHA-256 digest held inline: 32 bytes, no heap allocation.
package struct SHA256Digest: Sendable, Hashable {
    /// The bytes in memory order, as four words.
    package private(set) var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    package static func == (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    /// 32 zero bytes: a digest to write into, or what a binding of nothing is.
    package init() {}

    /// The digest whose 32 bytes these are, in order; nil for any other count.
    package init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == OpenSSLSHA256.byteCount else { return nil }
        var values: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for (offset, byte) in bytes.enumerated() {
            let bits = UInt64(byte) << UInt64(offset % 8 * 8)
            switch offset / 8 {
            case 0: values.0 |= bits
            case 1: values.1 |= bits
            case 2: values.2 |= bits
            default: values.3 |= bits
            }
        }
        // Each word holds its 8 bytes in memory order, as OpenSSL writes them.
        words = (
            UInt64(littleEndian: values.0), UInt64(littleEndian: values.1), UInt64(littleEndian: values.2), UInt64(littleEndian: values.3)
        )
    }

    /// The 32 bytes, in order.
    package var bytes: [UInt8] {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return bytes
    }

    /// Appends the 32 bytes, in order, to `output` (a credential being
    /// built), into capacity reserved once.
    package func append(to output: inout [UInt8]) {
        let words = words
        output.append(addingCapacity: OpenSSLSHA256.byteCount) { output in
            Self.write(words.0, to: &output)
            Self.write(words.1, to: &output)
            Self.write(words.2, to: &output)
            Self.write(words.3, to: &output)
        }
    }

    /// A word's 8 bytes in memory order.
    private static func write(_ word: UInt64, to output: inout OutputSpan<UInt8>) {
        let value = word.littleEndian
        for shift in stride(from: 0, to: 64, by: 8) { output.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    fileprivate mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) -> R) -> R {
        Swift.withUnsafeMutableBytes(of: &words) { body($0) }
    }

    fileprivate func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        Swift.withUnsafeBytes(of: words) { body($0) }
    }
}

/// SHA-256 over several pieces, for the gate's keys and bindings (the verdict
/// cache's key, a session's bindings, a CAT's replay identity), through the
/// library's OpenSSL, so the gate links no second implementation of the
/// primitive (docs/DESIGN.md#one-crypto-library).
///
/// A value: the state is OpenSSL's plain `SHA256_CTX`, held inline, so a hash
/// allocates nothing and a partly fed state can be copied (an HMAC key keeps
/// its two padded states so).
package struct SHA256Hasher: Sendable {
    private var state = SHA256_CTX()

    package init() {
        // Cannot fail: it only sets the initial hash value.
        _ = tokeninspect_sha256_init(&state)
    }

    /// Adds `bytes`, without a copy when their storage is contiguous (a
    /// `String`'s UTF-8, an array or a slice of one).
    package mutating func update(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            absorb(UnsafeRawBufferPointer(buffer))
        }
        if done == nil { Array(bytes).withUnsafeBytes { absorb($0) } }
    }

    /// Adds the bytes of a plain value (a length, a marker) as they lie in memory.
    package mutating func update<Value: BitwiseCopyable>(valueBytesOf value: Value) {
        withUnsafeBytes(of: value) { absorb($0) }
    }

    /// Adds the 32 bytes of a digest.
    package mutating func update(_ digest: SHA256Digest) {
        digest.withUnsafeBytes { absorb($0) }
    }

    /// The digest of everything added.
    package consuming func finalize() -> SHA256Digest {
        var digest = SHA256Digest()
        digest.withUnsafeMutableBytes { output in
            _ = tokeninspect_sha256_final(output.baseAddress?.assumingMemoryBound(to: UInt8.self), &state)
        }
        return digest
    }

    /// SHA-256 of one message.
    package static func hash(_ bytes: some Collection<UInt8>) -> SHA256Digest {
        var hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    private mutating func absorb(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        _ = tokeninspect_sha256_update(&state, base, bytes.count)
    }
}
