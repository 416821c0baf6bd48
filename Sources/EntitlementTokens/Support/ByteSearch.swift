/// The byte-scanning toolkit: searches and comparisons over hostile bytes,
/// for Transport, Framing and Parsing alike.
///
/// Callers hand over a `Span<UInt8>` (bounds-checked); the pointer work
/// (`memchr`, `memcmp`, reading a `StaticString` in place) stays here. The
/// gate's request reading searches with it too (`package`).
package enum ByteSearch {
    /// The index of the first `byte` in `bytes` at or after `start`, or nil.
    @inline(__always)
    package static func firstIndex(of byte: UInt8, in bytes: Span<UInt8>, from start: Int = 0) -> Int? {
        guard start >= 0, start < bytes.count else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            LibC.firstOffset(of: byte, in: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[start...]))).map { start + $0 }
        }
    }

    /// The index of the first occurrence of `needle` (not empty) in `bytes`
    /// at or after `start`, or nil. Linear for the short fixed needles the
    /// library searches for (`-->`, `]]>`, `?>`).
    static func firstIndex(of needle: StaticString, in bytes: Span<UInt8>, from start: Int = 0) -> Int? {
        let count = needle.utf8CodeUnitCount
        precondition(count > 0, "an empty needle")
        let first = needle.utf8Start.pointee
        var searchFrom = start
        while let candidate = firstIndex(of: first, in: bytes, from: searchFrom) {
            guard candidate + count <= bytes.count else { return nil }
            if matches(needle, in: bytes, at: candidate) == true { return candidate }
            searchFrom = candidate + 1
        }
        return nil
    }

    /// Whether `bytes` are exactly the UTF-8 of `text`: the length first, so
    /// a name of another length costs one comparison.
    @inline(__always)
    static func bytes(_ bytes: Span<UInt8>, equal text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.count == 0 || LibC.bytesEqual(buffer.baseAddress!, text.utf8Start, count: buffer.count)
        }
    }

    /// Whether `bytes` are exactly the UTF-8 of `text` (length first).
    @inline(__always)
    static func bytes(_ bytes: Span<UInt8>, equalUTF8Of text: String) -> Bool {
        guard bytes.count == text.utf8.count else { return false }
        let equal = text.utf8.withContiguousStorageIfAvailable { reference in
            bytes.withUnsafeBufferPointer { buffer in
                buffer.count == 0 || LibC.bytesEqual(buffer.baseAddress!, reference.baseAddress!, count: buffer.count)
            }
        }
        // Literals and native strings are contiguous; a bridged one is compared byte by byte.
        if let equal { return equal }
        var index = 0
        for byte in text.utf8 {
            guard bytes[index] == byte else { return false }
            index += 1
        }
        return true
    }

    /// Whether `bytes` hold `prefix` at `start`: true or false when decidable,
    /// nil when `bytes` end before a mismatch (a stream may bring the rest).
    static func matches(_ prefix: StaticString, in bytes: Span<UInt8>, at start: Int) -> Bool? {
        precondition(start >= 0 && start <= bytes.count)
        let count = prefix.utf8CodeUnitCount
        return bytes.withUnsafeBufferPointer { buffer -> Bool? in
            let reference = UnsafeBufferPointer(start: prefix.utf8Start, count: count)
            if start + count <= buffer.count {
                return LibC.bytesEqual(buffer.baseAddress! + start, reference.baseAddress!, count: count)
            }
            for offset in 0..<(buffer.count - start) where buffer[start + offset] != reference[offset] {
                return false
            }
            return nil
        }
    }

    /// Whether two byte runs are equal (`memcmp` after a length check).
    @inline(__always)
    static func bytes(_ lhs: Span<UInt8>, equal rhs: Span<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard lhs.count > 0 else { return true }
        return lhs.withUnsafeBufferPointer { left in
            rhs.withUnsafeBufferPointer { right in
                LibC.bytesEqual(left.baseAddress!, right.baseAddress!, count: left.count)
            }
        }
    }
}
