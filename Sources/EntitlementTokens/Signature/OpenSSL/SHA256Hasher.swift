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

    /// The 32 bytes, in order.
    package var bytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(OpenSSLSHA256.byteCount)
        for word in [words.0, words.1, words.2, words.3] {
            let value = word.littleEndian
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        return bytes
    }

    fileprivate mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) -> R) -> R {
        Swift.withUnsafeMutableBytes(of: &words) { body($0) }
    }
}

/// SHA-256 over several pieces, for the gate's keys and bindings (the verdict
/// cache's key, a session's bindings, a CAT's replay identity). Through the
/// library's OpenSSL and its once-fetched method, so the gate links no second
/// implementation of the primitive (docs/DESIGN.md#one-crypto-library).
///
/// Not copyable: it owns an OpenSSL digest context, freed when it goes.
package struct SHA256Hasher: ~Copyable {
    private let context: OpaquePointer

    package init() {
        // Allocation failure inside OpenSSL, as Swift's own allocation failure, ends the process.
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex2(context, OpenSSLSHA256.shared.method, nil) == 1 else {
            fatalError("OpenSSL could not set up a SHA-256 context (out of memory)")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds `bytes`, without a copy when their storage is contiguous (a
    /// `String`'s UTF-8, an array or a slice of one).
    package mutating func update(_ bytes: some Collection<UInt8>) {
        let context = self.context
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            Self.absorb(UnsafeRawBufferPointer(buffer), into: context)
        }
        if done == nil { Array(bytes).withUnsafeBytes { Self.absorb($0, into: context) } }
    }

    /// Adds the bytes of a plain value (a length, a marker) as they lie in memory.
    package mutating func update<Value: BitwiseCopyable>(valueBytesOf value: Value) {
        let context = self.context
        withUnsafeBytes(of: value) { Self.absorb($0, into: context) }
    }

    /// The digest of everything added.
    package consuming func finalize() -> SHA256Digest {
        var digest = SHA256Digest()
        var length: UInt32 = 0
        let context = self.context
        let done = digest.withUnsafeMutableBytes { output in
            EVP_DigestFinal_ex(context, output.baseAddress?.assumingMemoryBound(to: UInt8.self), &length) == 1
        }
        guard done, length == UInt32(OpenSSLSHA256.byteCount) else { fatalError("OpenSSL could not finish a SHA-256 digest") }
        return digest
    }

    /// SHA-256 of one message.
    package static func hash(_ bytes: some Collection<UInt8>) -> SHA256Digest {
        var hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    private static func absorb(_ bytes: UnsafeRawBufferPointer, into context: OpaquePointer) {
        guard !bytes.isEmpty else { return }
        guard EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1 else {
            fatalError("OpenSSL could not update a SHA-256 digest")
        }
    }
}
