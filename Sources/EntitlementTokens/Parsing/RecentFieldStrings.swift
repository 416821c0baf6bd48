/// The strings of the fields the parser made last, by position in the
/// document, handed out again when the same bytes come back.
///
/// A stream of tokens repeats itself: every token of one kind has the same
/// paths in the same order, and most values (the requestor, the resource, the
/// MVPD, the TTL) are those of the token before. Comparing the bytes with the
/// string made last time at that position is a length check and a `memcmp`;
/// making the string again is a UTF-8 check, often an allocation, and a free
/// when the token goes. Only bytes equal to a string's UTF-8 get that string
/// (a string's UTF-8 is always valid, so bytes that are not never match one),
/// and a field reads exactly as if its string had been made anew.
///
/// Bounded: ``maximumPositions`` positions, each a string of at most
/// ``maximumBytes`` bytes (a longer one is made every time and not kept).
struct RecentFieldStrings {
    static let maximumPositions = 64
    static let maximumBytes = 1024

    private var strings: [String] = []

    /// The string of `bytes` (invalid UTF-8 repaired, as `String(decoding:as:)`
    /// does), reusing the one made last at `position` when its UTF-8 is these
    /// bytes. Inlined into the field reader: it runs twice per field.
    @inline(__always)
    mutating func string(_ bytes: Span<UInt8>, at position: Int) -> String {
        if position < strings.count, ByteSearch.bytes(bytes, equalUTF8Of: strings[position]) {
            return strings[position]
        }
        let made = bytes.decodedAsUTF8
        guard bytes.count <= Self.maximumBytes else { return made }
        if position < strings.count {
            strings[position] = made
        } else if position == strings.count, position < Self.maximumPositions {
            strings.append(made)
        }
        return made
    }
}
