internal import COpenSSL

/// SHA-256 through one `EVP_MD` fetched once for the whole process.
///
/// `EVP_sha256()` or a name looked up per call makes OpenSSL 3 search its
/// provider store on every use (an implicit fetch takes a lock). Fetching once
/// and reusing the method object keeps that out of the verify path; fetched
/// methods are immutable and reference counted atomically, so one object
/// serves every thread.
final class OpenSSLSHA256: @unchecked Sendable {
    /// The `EVP_MD *` for SHA-256.
    let method: OpaquePointer
    private let owned: Bool

    /// The process-wide instance. `static let` is initialised once, thread-safely.
    static let shared = OpenSSLSHA256()

    /// Length of a SHA-256 digest in bytes.
    static let byteCount = 32

    private init() {
        if let fetched = EVP_MD_fetch(nil, "SHA256", nil) {
            method = fetched
            owned = true
        } else {
            // No provider answered the explicit fetch (an unusual OpenSSL
            // configuration). The legacy static method still works, only slower.
            OpenSSLErrorQueue.clear()
            method = EVP_sha256()
            owned = false
        }
    }

    deinit {
        if owned { EVP_MD_free(method) }
    }

    /// Writes SHA-256(`message`) into `output` (at least 32 bytes).
    /// Returns false only if OpenSSL fails (allocation failure).
    func digest(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        precondition(output.count >= Self.byteCount)
        var length: UInt32 = 0
        let ok = EVP_Digest(
            message.baseAddress,
            message.count,
            output.baseAddress?.assumingMemoryBound(to: UInt8.self),
            &length,
            method,
            nil
        )
        if ok != 1 || length != UInt32(Self.byteCount) {
            OpenSSLErrorQueue.clear()
            return false
        }
        return true
    }

    /// SHA-256 of `bytes` as lowercase hex (used for fingerprints, not on the hot path).
    func hexDigest(of bytes: [UInt8]) -> String? {
        var out = [UInt8](repeating: 0, count: Self.byteCount)
        let ok = bytes.withUnsafeBytes { message in
            out.withUnsafeMutableBytes { digest(message, into: $0) }
        }
        guard ok else { return nil }
        return ByteRules.lowercaseHex(out)
    }
}

/// The SHA-256 of one message, computed at most once however many keys look at it.
///
/// A key ring tries several keys against one token; every scheme except
/// Ed25519 signs the SHA-256 of the message, so the ring hashes once and hands
/// the same digest to each key. The verifier then keeps it: the same digest is
/// the token's replay identity and its id in logs (docs/DESIGN.md#one-of-each-per-request).
/// Stored inline (no heap allocation).
struct SignedMessageDigest {
    private var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var state: State = .pending

    private enum State { case pending, ready, failed }

    init() {}

    /// Runs `body` with SHA-256(`message`), hashing on first use; nil if hashing failed.
    mutating func withSHA256<R>(
        of message: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) -> R
    ) -> R? {
        if state == .pending {
            let ok = withUnsafeMutableBytes(of: &storage) { OpenSSLSHA256.shared.digest(message, into: $0) }
            state = ok ? .ready : .failed
        }
        guard state == .ready else { return nil }
        return withUnsafeBytes(of: &storage) { body($0) }
    }

    /// The digest's 32 bytes if it was computed, without computing it: nil
    /// when no key hashed the message (Ed25519 only, a signature of a length
    /// no key makes, no signature check) or hashing failed.
    var computed: [UInt8]? {
        guard state == .ready else { return nil }
        // The words hold the bytes in memory order: read them back with
        // shifts (no pointer), least significant first whatever the CPU.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(OpenSSLSHA256.byteCount)
        func append(_ word: UInt64) {
            let value = word.littleEndian
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        append(storage.0)
        append(storage.1)
        append(storage.2)
        append(storage.3)
        return bytes
    }

    /// The digest's 32 bytes, hashing `message` now if no key did (then kept,
    /// like a key's); nil only if hashing failed (an allocation failure
    /// inside OpenSSL). Off the hot path: only an Ed25519-only ring or an
    /// unchecked signature leaves the message unhashed.
    mutating func bytes(of message: Span<UInt8>) -> [UInt8]? {
        if state == .pending {
            if let bytes = OpenSSLDigest.digest(of: message, with: .sha256), bytes.count == OpenSSLSHA256.byteCount {
                func word(_ index: Int) -> UInt64 {
                    var value: UInt64 = 0
                    for offset in 0..<8 { value |= UInt64(bytes[index * 8 + offset]) << UInt64(offset * 8) }
                    return UInt64(littleEndian: value)
                }
                storage = (word(0), word(1), word(2), word(3))
                state = .ready
            } else {
                state = .failed
            }
        }
        return computed
    }
}
