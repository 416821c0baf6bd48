internal import Synchronization

extension MediaRSSResource {
    /// Built once, not per token.
    private static let rssRoot: Set<String> = ["rss"]

    /// Parses an RSS document with `parser`; nil with a reason when it is not
    /// one, or when it is ambiguous (`ambiguousMediaRSS`): more than one
    /// channel, more than one item, or more than one title or guid in one
    /// scope. Which one an issuer meant cannot be told, so none is picked (docs/DESIGN.md#the-rules-of-the-checks).
    static func parse(_ text: String, with parser: XMLPushParser) -> Result<MediaRSSResource, TokenError> {
        let parsed = Result { () throws(TokenError) in
            try parser.parse(text.utf8.span, allowedRoots: rssRoot, recordingContainers: true)
        }
        switch parsed {
        case .failure(let error):
            return .failure(error)
        case .success(let element):
            return reading(element)
        }
    }

    /// The identifying elements, each counted wherever it occurs (as a field or with children).
    private enum Part: Int, CaseIterable {
        case channel, channelTitle, item, itemTitle, itemGUID, itemRating

        static let paths = ["channel", "channel/title", "channel/item", "channel/item/title", "channel/item/guid", "channel/item/media:rating"]

        init?(path: String) {
            // Byte for byte, like every id comparison.
            guard let index = Self.paths.firstIndex(where: { $0.hasSameUTF8(as: path) }) else { return nil }
            self.init(rawValue: index)
        }

        var what: String {
            switch self {
            case .channel: "more than one channel"
            case .channelTitle: "more than one channel title"
            case .item: "more than one item"
            case .itemTitle: "more than one item title"
            case .itemGUID: "more than one item guid"
            case .itemRating: "more than one rating"
            }
        }
    }

    private static func reading(_ element: ParsedElement) -> Result<MediaRSSResource, TokenError> {
        var counts = [Int](repeating: 0, count: Part.allCases.count)
        var values = [String?](repeating: nil, count: Part.allCases.count)
        for field in element.fields {
            guard let part = Part(path: field.path) else { continue }
            counts[part.rawValue] += 1
            if values[part.rawValue] == nil { values[part.rawValue] = field.value }
        }
        for path in element.containerPaths {
            if let part = Part(path: path) { counts[part.rawValue] += 1 }
        }
        // A rating is shown, never matched: only the identifying parts must be unique.
        for part in [Part.channel, .item, .channelTitle, .itemTitle, .itemGUID] where counts[part.rawValue] > 1 {
            return .failure(TokenError(.ambiguousMediaRSS, stage: .model, "the Media RSS document has \(part.what)"))
        }
        guard let title = values[Part.channelTitle.rawValue] else {
            return .failure(TokenError(.missingField, stage: .model, "the RSS document has no channel/title"))
        }
        return .success(
            MediaRSSResource(
                channelTitle: title,
                itemTitle: values[Part.itemTitle.rawValue],
                itemGUID: values[Part.itemGUID.rawValue],
                rating: values[Part.itemRating.rawValue]
            )
        )
    }

    /// The reading of `text` (which ``looksLikeRSS(_:)``) with the decoder's limits,
    /// on a parser of the configuration's shared ``TokenDecoderPool``.
    static func reading(of text: String, configuration: DecoderConfiguration) -> Result<MediaRSSResource, TokenError> {
        TokenDecoderPool.shared(for: configuration).withDecoder { parse(text, with: $0.parser) }
    }
}

/// The Media RSS reading of one `resourceID`, made the first time anyone asks
/// and then kept (``DecodedToken/mediaRSS`` and ``DecodedToken/warnings``).
///
/// Only a resource check that is not an exact match, and people looking at
/// the token, need it; the signature and the other checks do not. The nested
/// document goes through the same hardened parser as the token, with the
/// decoder's limits, on a parser borrowed from ``TokenDecoderPool`` (making a
/// libxml2 context per call would cost more than the parse).
final class LazyMediaRSS: MediaRSSReading {
    let text: String
    let configuration: DecoderConfiguration
    private let outcome = Mutex<Result<MediaRSSResource, TokenError>?>(nil)

    init(text: String, configuration: DecoderConfiguration) {
        self.text = text
        self.configuration = configuration
    }

    /// Parses on first use; concurrent first uses may both parse, with the same result.
    var result: Result<MediaRSSResource, TokenError> {
        if let known = outcome.withLock({ $0 }) { return known }
        let parsed = MediaRSSResource.reading(of: text, configuration: configuration)
        outcome.withLock { $0 = $0 ?? parsed }
        return parsed
    }

    var resource: MediaRSSResource? {
        if case .success(let rss) = result { return rss }
        return nil
    }

    /// What the decoder says about a `resourceID` that looks like XML but is not (usable) Media RSS.
    var warning: String? {
        guard case .failure(let error) = result else { return nil }
        if error.code == .ambiguousMediaRSS {
            return "resourceID is ambiguous: \(error.message); it matches an expected resource only byte for byte"
        }
        return "resourceID looks like XML but is not a Media RSS document (\(error.message)); it is compared as an opaque string"
    }
}
