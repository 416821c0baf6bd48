/// What the standard library does not yet offer on a `Span` of bytes: making
/// a `String` or an array from it in one copy. The copy reads the span's
/// memory in place, so it lives here (docs/DESIGN.md#unsafe-code-faces-c).
extension Span where Element == UInt8 {
    /// The bytes decoded as UTF-8 (invalid sequences become U+FFFD).
    var decodedAsUTF8: String {
        withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    }

    /// A copy of the bytes.
    var copiedToArray: [UInt8] {
        withUnsafeBufferPointer { Array($0) }
    }
}

extension Array where Element == UInt8 {
    /// Appends a copy of `bytes` (one `memcpy`).
    mutating func append(copying bytes: Span<UInt8>) {
        bytes.withUnsafeBufferPointer { append(contentsOf: $0) }
    }
}
