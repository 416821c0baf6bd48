/// A `resourceID` written as a Media RSS document, reduced to what identifies it.
///
/// Issuers put either a bare id (`TNT`) or an RSS document in `resourceID`;
/// a bare id means the same as an RSS document whose channel title is that id.
/// The document is hostile input like the token itself, so it goes through the
/// same hardened parser.
public struct MediaRSSResource: Sendable, Hashable {
    public var channelTitle: String
    public var itemTitle: String?
    public var itemGUID: String?
    public var rating: String?

    public init(channelTitle: String, itemTitle: String? = nil, itemGUID: String? = nil, rating: String? = nil) {
        self.channelTitle = channelTitle
        self.itemTitle = itemTitle
        self.itemGUID = itemGUID
        self.rating = rating
    }

    /// True when `text` is meant as an RSS document rather than a bare id.
    static func looksLikeRSS(_ text: String) -> Bool {
        text.utf8.first(where: { !$0.isASCIIWhitespace }) == UInt8(ascii: "<")
    }

    /// Parses an RSS document with `parser`; nil with a reason when it is not one.
    static func parse(_ text: String, with parser: XMLPushParser) -> Result<MediaRSSResource, TokenError> {
        var copy = text
        let parsed = copy.withUTF8 { bytes in
            Result { () throws(TokenError) in try parser.parse(bytes, allowedRoots: ["rss"]) }
        }
        switch parsed {
        case .failure(let error):
            return .failure(error)
        case .success(let element):
            func first(_ path: String) -> String? { element.fields.first { $0.path == path }?.value }
            guard let title = first("channel/title") else {
                return .failure(TokenError(.missingField, stage: .model, "the RSS document has no channel/title"))
            }
            return .success(MediaRSSResource(channelTitle: title, itemTitle: first("channel/item/title"),
                                             itemGUID: first("channel/item/guid"), rating: first("channel/item/media:rating")))
        }
    }
}
