/// The bounds a CBOR reading keeps on hostile input (docs/DESIGN.md#the-cdn-exchange):
/// an item may nest `maximumDepth` deep (arrays, maps and tags each count one
/// level), and the whole input is at most `maximumInputBytes`. Lengths are
/// checked against the bytes that remain before anything is allocated, so a
/// declared length of 2⁶⁴ − 1 costs nothing.
public struct CBORLimits: Sendable, Hashable {
    public var maximumDepth: Int
    public var maximumInputBytes: Int

    public init(maximumDepth: Int = 16, maximumInputBytes: Int = 8192) {
        self.maximumDepth = maximumDepth
        self.maximumInputBytes = maximumInputBytes
    }

    /// A Common Access Token: depth 16, 8 KiB, for the whole COSE message and
    /// for the claims inside it.
    public static let commonAccessToken = CBORLimits()
}
