#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Finding a byte or a short run of bytes in hostile input: the one
/// byte-search toolkit of the library (framing, parsing, transport).
///
/// The search itself is libc's `memchr`, which reads a word or a vector at a
/// time; the API takes and returns only bounds-checked values (`Span`,
/// offsets), so callers never hold a pointer. docs/PERFORMANCE.md, "Internal
/// architecture (issue 12)", has what `memchr` buys over a `Span` loop.
enum ByteSearch {
    /// The offset of the first `byte` at or after `from` in `bytes`, or nil.
    static func firstIndex(of byte: UInt8, in bytes: Span<UInt8>, from: Int) -> Int? {
        guard from >= 0, from < bytes.count else { return nil }
        return unsafe bytes.withUnsafeBufferPointer { buffer in
            unsafe firstIndex(of: byte, in: buffer, from: from)
        }
    }

    /// The offset of the first occurrence of `needle` (not empty) at or after
    /// `from` in `bytes`, or nil.
    static func firstIndex(of needle: Span<UInt8>, in bytes: Span<UInt8>, from: Int) -> Int? {
        guard !needle.isEmpty else { return nil }
        let first = needle[0]
        var searchFrom = from
        while let candidate = firstIndex(of: first, in: bytes, from: searchFrom) {
            guard candidate + needle.count <= bytes.count else { return nil }
            var matched = true
            for offset in 1..<needle.count where bytes[candidate + offset] != needle[offset] {
                matched = false
                break
            }
            if matched { return candidate }
            searchFrom = candidate + 1
        }
        return nil
    }

    /// The same search over a buffer of callers that still hold one (Transport).
    static func firstIndex(of byte: UInt8, in buffer: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard from >= 0, from < buffer.count, let base = buffer.baseAddress else { return nil }
        guard let found = unsafe memchr(base + from, Int32(byte), buffer.count - from) else { return nil }
        return unsafe base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }
}
