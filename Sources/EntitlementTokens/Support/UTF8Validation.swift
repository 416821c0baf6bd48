/// Strict UTF-8 validation (RFC 3629): no overlong forms, no surrogates,
/// nothing above U+10FFFF.
///
/// Done once on the decoded XML, before any parsing, so that every invalid
/// byte gets the same error code and an exact offset, whatever libxml2 would
/// have said about it.
///
/// A hot kernel: its ASCII fast path reads 32 bytes per step through
/// unaligned word loads, so it lives in Support/ behind a `Span` API
/// (docs/PERFORMANCE.md, "Internal architecture (issue 12)").
package enum UTF8Validation {
    /// The offset of the first byte that does not begin a valid UTF-8 sequence, or nil.
    package static func firstInvalidOffset(in bytes: Span<UInt8>) -> Int? {
        bytes.withUnsafeBufferPointer { firstInvalidOffset(in: $0) }
    }

    private static func firstInvalidOffset(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var index = 0
        let count = bytes.count
        while index < count {
            // ASCII fast path: 32 bytes at a time (four words OR-ed, one test),
            // then eight, while none has its high bit set.
            while index + 32 <= count {
                let words = UnsafeRawPointer(bytes.baseAddress! + index)
                let any =
                    words.loadUnaligned(as: UInt64.self) | words.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                    | words.loadUnaligned(fromByteOffset: 16, as: UInt64.self) | words.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
                guard any & 0x8080_8080_8080_8080 == 0 else { break }
                index += 32
            }
            while index + 8 <= count,
                UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0
            {
                index += 8
            }
            guard index < count else { break }
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                upper = 0x9F  // U+D800…U+DFFF are surrogates
            case 0xF0:
                length = 4
                lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                upper = 0x8F  // nothing above U+10FFFF
            default: return index
            }
            guard index + length <= count else { return index }
            let second = bytes[index + 1]
            guard second >= lower, second <= upper else { return index }
            for offset in 2..<max(2, length) where bytes[index + offset] & 0xC0 != 0x80 {
                return index
            }
            index += length
        }
        return nil
    }
}
