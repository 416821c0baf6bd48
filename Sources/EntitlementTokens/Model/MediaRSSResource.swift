/// A `resourceID` written as a Media RSS document, reduced to what identifies it.
///
/// Issuers put either a bare id (`TNT`) or an RSS document in `resourceID`;
/// a bare id means the same as an RSS document whose channel title is that id.
/// The document is hostile input like the token itself, so it goes through the
/// same hardened parser.
public struct MediaRSSResource: Sendable, Hashable {
    /// The channel title: the resource id a bare `resourceID` would be.
    public var channelTitle: String
    /// The item title (the show), when present.
    public var itemTitle: String?
    /// The item GUID, when present.
    public var itemGUID: String?
    /// The `media:rating`, when present.
    public var rating: String?

    /// A reading with the given parts.
    public init(channelTitle: String, itemTitle: String? = nil, itemGUID: String? = nil, rating: String? = nil) {
        self.channelTitle = channelTitle
        self.itemTitle = itemTitle
        self.itemGUID = itemGUID
        self.rating = rating
    }

    /// True when `text` is meant as an RSS document rather than a bare id.
    static func looksLikeRSS(_ text: String) -> Bool {
        // The string's own UTF-8 (iterating its `utf8` view byte by byte costs more).
        let utf8 = text.utf8
        let bytes = utf8.span
        for index in bytes.indices where !bytes[index].isASCIIWhitespace {
            return bytes[index] == UInt8(ascii: "<")
        }
        return false
    }

}

/// The Media RSS reading of one `resourceID`, as the model keeps it: made
/// by the decoding stage (``LazyMediaRSS``), which parses on first use. The
/// model names only this protocol, so it never depends on the parser.
protocol MediaRSSReading: AnyObject, Sendable {
    var resource: MediaRSSResource? { get }
    /// What the decoder says about a `resourceID` that looks like XML but is not (usable) Media RSS.
    var warning: String? { get }
}
