/// Equality and hashing of strings by their UTF-8 bytes (docs/DESIGN.md#ids-are-compared-byte-for-byte).
///
/// Swift's `==`, `Hashable` and `Set<String>` use Unicode canonical
/// equivalence: `Café` composed equals `Café` decomposed, U+212B (Angstrom
/// sign) equals U+00C5, U+212A (Kelvin sign) equals `K`. Ids in a token are
/// bytes an issuer signed, so two ids are the same only when their bytes are:
/// every comparison of an id, a field path or a resource goes through here.
/// Byte equality is also cheaper than canonical equality when strings differ.
extension String {
    /// True when both strings have exactly the same UTF-8 bytes.
    @inline(__always)
    func hasSameUTF8(as other: String) -> Bool {
        let count = utf8.count
        guard count == other.utf8.count else { return false }
        let equal = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in
                count == 0 || LibC.bytesEqual(mine.baseAddress!, theirs.baseAddress!, count: count)
            }
        }
        // Every native and small string lends its bytes; bridged ones are compared byte by byte.
        return (equal ?? nil) ?? utf8.elementsEqual(other.utf8)
    }

    /// Feeds the UTF-8 bytes (and their count) to `hasher`, matching ``hasSameUTF8(as:)``.
    func hashUTF8(into hasher: inout Hasher) {
        hasher.combine(utf8.count)
        let done: Void? = utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if done == nil {
            for byte in utf8 { hasher.combine(byte) }
        }
    }
}

/// A string as a hashing key by its bytes: a `Set` or `Dictionary` keyed by
/// it tells `Café` composed from `Café` decomposed, as a `Set<String>` cannot.
struct UTF8Key: Hashable, Sendable {
    let string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: UTF8Key, rhs: UTF8Key) -> Bool { lhs.string.hasSameUTF8(as: rhs.string) }
    func hash(into hasher: inout Hasher) { string.hashUTF8(into: &hasher) }
}

extension String {
    /// The id quoted for a reason. When `other` is the same text in another
    /// Unicode form (so both would print alike), its scalars are added: a
    /// reason must never read "'Café', expected 'Café'".
    func quotedID(beside other: String) -> String {
        // `==` is canonical equivalence: exactly the case where the two print alike.
        guard self == other, !hasSameUTF8(as: other) else { return "'\(self)'" }
        let scalars = unicodeScalars.map { scalar in
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        return "'\(self)' (\(scalars.joined(separator: " ")))"
    }
}
