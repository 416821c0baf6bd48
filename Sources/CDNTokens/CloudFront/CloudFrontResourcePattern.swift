/// A policy's `Resource` as CloudFront matches it against the URL asked for:
/// `*` stands for any run of characters (none included), `?` for exactly one,
/// every other byte for itself; the whole URL must match.
///
/// Matched without backtracking, so a hostile pattern such as `*a*a*a*…b`
/// costs no more than its length times the URL's: the pattern is cut at its
/// `*`s into pieces; the first piece must begin the URL, the last must end it,
/// and each piece between is taken at its leftmost place after the one before
/// (a leftmost place never loses a match a later one would find). Each piece is
/// searched with the bit-parallel Shift-And automaton, one step per URL byte,
/// so the search is linear in the URL for pieces up to 64 bytes and
/// `URL × piece / 64` beyond.
package struct CloudFrontResourcePattern: Sendable, Hashable {
    package let pattern: [UInt8]

    package init(_ pattern: String) {
        self.pattern = Array(pattern.utf8)
    }

    package func matches(_ url: String) -> Bool {
        let text = Array(url.utf8)
        let pieces = pattern.split(separator: UInt8(ascii: "*"), omittingEmptySubsequences: false)
        guard pieces.count > 1 else { return text.count == pattern.count && Self.equal(pattern[...], text[...]) }
        let first = pieces[0]
        let last = pieces[pieces.count - 1]
        guard first.count + last.count <= text.count,
            Self.equal(first, text[..<first.count]),
            Self.equal(last, text[(text.count - last.count)...])
        else { return false }
        var start = first.count
        let end = text.count - last.count
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let found = Self.leftmost(piece, in: text[start..<end]) else { return false }
            start = found
        }
        return true
    }

    /// True when `piece` (which may hold `?`) matches `text` byte for byte.
    private static func equal(_ piece: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        guard piece.count == text.count else { return false }
        return zip(piece, text).allSatisfy { $0 == UInt8(ascii: "?") || $0 == $1 }
    }

    /// The index just past the leftmost occurrence of `piece` in `text`, or nil.
    ///
    /// Shift-And: bit `j` of the state says "the piece's first `j + 1` bytes end
    /// here". A byte's mask has bit `j` set when the piece's byte `j` is that
    /// byte or `?`; the state advances as `((state << 1) | 1) & mask`.
    private static func leftmost(_ piece: ArraySlice<UInt8>, in text: ArraySlice<UInt8>) -> Int? {
        let length = piece.count
        guard length <= text.count else { return nil }
        let words = (length + 63) / 64
        // Only the rows of bytes the piece holds are written; any other byte
        // matches only where the piece has `?`.
        var masks = [UInt64](repeating: 0, count: 256 * words)
        var wildcard = [UInt64](repeating: 0, count: words)
        for (offset, byte) in piece.enumerated() {
            let bit: UInt64 = 1 << UInt64(offset % 64)
            if byte == UInt8(ascii: "?") {
                wildcard[offset / 64] |= bit
            } else {
                masks[Int(byte) * words + offset / 64] |= bit
            }
        }
        let lastBit: UInt64 = 1 << UInt64((length - 1) % 64)
        var state = [UInt64](repeating: 0, count: words)
        for index in text.indices {
            let row = Int(text[index]) * words
            var carry: UInt64 = 1
            for word in 0..<words {
                let shifted = state[word] << 1 | carry
                carry = state[word] >> 63
                state[word] = shifted & (masks[row + word] | wildcard[word])
            }
            if state[words - 1] & lastBit != 0 { return index + 1 }
        }
        return nil
    }
}
