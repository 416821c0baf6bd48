/// One access-control pattern of an EdgeAuth token's `acl` field (a field
/// holds several, joined by `!`): a path where `*` stands for any run of
/// bytes, `/` included, as Akamai's edges read it.
///
/// The pattern and the requested path are compared after percent-decoding
/// (RFC 3986 §2.1), so `%2fhls%2f*` (what some edge configurations write)
/// covers `/hls/a.ts`. A `*` is a wildcard only when written as `*`: `%2a`
/// decodes to a literal star, because the pattern is split at its stars
/// before its pieces are decoded.
///
/// Matching is linear in the lengths of the pattern and the path: the first
/// piece must start the path, the last must end it, and each piece between is
/// found leftmost (a Knuth–Morris–Pratt search), which is the whole answer for
/// a pattern whose only wildcard is `*`. There is no backtracking, so
/// `*a*a*a*…b` costs no more than its length.
public struct EdgeAuthACL: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as the token writes it.
    public let text: String
    /// The decoded pieces between the stars (one piece when there is no star).
    let pieces: [[UInt8]]

    /// `text` must be non-empty and its `%` must each start a `%XX` escape.
    init(_ text: String) throws(CDNRefusal) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw .format("an empty ACL in the acl field") }
        guard URLEscaping.hasWellFormedEscapes(bytes) else {
            throw .format("the ACL '\(text)' has a '%' that is not a %XX escape")
        }
        self.text = text
        pieces = bytes.split(separator: UInt8(ascii: "*"), omittingEmptySubsequences: false).map { URLEscaping.percentDecoded($0) }
    }

    public var description: String { text }

    /// True when the percent-decoded `path` matches this pattern.
    public func covers(path: String) -> Bool {
        Self.matches(pieces, URLEscaping.percentDecoded(path.utf8))
    }

    /// `pieces` are a pattern split at its stars (`pieces.count - 1` stars).
    static func matches(_ pieces: [[UInt8]], _ subject: [UInt8]) -> Bool {
        guard let first = pieces.first, let last = pieces.last else { return false }
        if pieces.count == 1 { return subject == first }
        guard first.count + last.count <= subject.count,
            subject.starts(with: first), subject.suffix(last.count).elementsEqual(last)
        else { return false }
        var position = first.count
        let end = subject.count - last.count
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let found = firstOccurrence(of: piece, in: subject, from: position, to: end) else { return false }
            position = found + piece.count
        }
        return true
    }

    /// Where `needle` (non-empty) first occurs wholly within `haystack[from..<to]`,
    /// by Knuth–Morris–Pratt: time linear in `to − from` plus the needle's length.
    static func firstOccurrence(of needle: [UInt8], in haystack: [UInt8], from: Int, to: Int) -> Int? {
        guard to - from >= needle.count else { return nil }
        var failure = [Int](repeating: 0, count: needle.count)
        var matched = 0
        for index in 1..<max(needle.count, 1) {
            while matched > 0 && needle[index] != needle[matched] { matched = failure[matched - 1] }
            if needle[index] == needle[matched] { matched += 1 }
            failure[index] = matched
        }
        matched = 0
        for index in from..<to {
            while matched > 0 && haystack[index] != needle[matched] { matched = failure[matched - 1] }
            if haystack[index] == needle[matched] { matched += 1 }
            if matched == needle.count { return index - needle.count + 1 }
        }
        return nil
    }
}
