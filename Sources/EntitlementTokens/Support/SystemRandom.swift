/// The library's one source of random bytes: the system's CSPRNG
/// (`getrandom(2)` on Linux) through the standard library's
/// `SystemRandomNumberGenerator`, eight bytes a call, with no unsafe code.
/// Content keys and IVs, GUIDs, a CAT's `cti` and a process's instance id
/// all come from here (docs/DESIGN.md#one-crypto-library says why not
/// OpenSSL's `RAND_bytes`).
package enum SystemRandom {
    package static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            var word = generator.next()
            for _ in 0..<min(8, count - bytes.count) {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return bytes
    }
}
