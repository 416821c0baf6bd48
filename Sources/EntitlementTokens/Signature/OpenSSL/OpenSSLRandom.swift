internal import COpenSSL

/// Random bytes from OpenSSL's CSPRNG, the generator the library already
/// trusts for its keys: a minted GUID must be unguessable as well as unique,
/// since a gate's replay check and session store key on it.
enum OpenSSLRandom {
    /// `count` random bytes. OpenSSL fails only when it cannot seed itself;
    /// issuing a predictable GUID then would be worse than stopping.
    static func bytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBytes { buffer in
            RAND_bytes(buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(buffer.count))
        }
        if ok != 1 {
            let reason = OpenSSLErrorQueue.drain()
            preconditionFailure("OpenSSL could not produce random bytes: \(reason)")
        }
        return bytes
    }
}
