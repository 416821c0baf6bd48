/// An HMAC-SHA-256 key (RFC 2104) with its pads already hashed: the inner and
/// outer SHA-256 states after one block each, kept as values and copied per
/// code, so a request sets up no key and allocates nothing. For the gate's
/// playback sessions (docs/DESIGN.md#one-crypto-library).
package struct HMACSHA256Key: Sendable {
    private static let blockSize = 64

    private let inner: SHA256Hasher
    private let outer: SHA256Hasher

    package init(_ key: [UInt8]) {
        // A key longer than a block is hashed first; a shorter one is padded with zeros.
        var block = key.count > Self.blockSize ? SHA256Hasher.hash(key).bytes : key
        block += [UInt8](repeating: 0, count: Self.blockSize - block.count)
        var inner = SHA256Hasher()
        inner.update(block.map { $0 ^ 0x36 })
        var outer = SHA256Hasher()
        outer.update(block.map { $0 ^ 0x5C })
        self.inner = inner
        self.outer = outer
    }

    /// The code of `message`.
    package func authenticationCode(for message: some Collection<UInt8>) -> SHA256Digest {
        var inner = self.inner
        inner.update(message)
        var outer = self.outer
        outer.update(inner.finalize())
        return outer.finalize()
    }

    /// Whether `code` is the code of `message`; the comparison's time does not
    /// depend on where the codes differ (`CRYPTO_memcmp`).
    package func isValid(_ code: some Collection<UInt8>, for message: some Collection<UInt8>) -> Bool {
        ConstantTime.equals(authenticationCode(for: message).bytes, Array(code))
    }
}
