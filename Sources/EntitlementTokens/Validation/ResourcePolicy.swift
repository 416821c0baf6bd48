/// `INVALID_RESOURCE_ID` when the token is for another resource.
///
/// Equal strings match. Otherwise both sides are read as Media RSS — a bare
/// id `TNT` means a channel titled `TNT` — and they match when the channel
/// titles are equal and, if both name an item guid, the guids are equal.
struct ResourcePolicy: TokenPolicy {
    var expectedRaw: String
    /// Nil when the expectation looks like XML but is not Media RSS: then only exact equality matches.
    var expected: ResourceIdentity?
    /// How reasons name the expectation; fixed, so described once, not per refused token.
    var expectedSummary: String
    var check: VerificationCheck { .resource }

    init(expected raw: String, parser: XMLPushParser) {
        expectedRaw = raw
        if MediaRSSResource.looksLikeRSS(raw) {
            expected = (try? MediaRSSResource.parse(raw, with: parser).get()).map(ResourceIdentity.init(rss:))
        } else {
            expected = ResourceIdentity(channelTitle: raw, itemGUID: nil)
        }
        expectedSummary = ResourceIdentity.summary(of: raw)
    }

    func evaluate(_ token: DecodedToken, now: TokenTimestamp) -> PolicyResult {
        let candidates: [String]
        switch token.token {
        case .authentication(let authN):
            guard !authN.authorizedResources.isEmpty else {
                return .skip("this authentication token names no resource")
            }
            candidates = authN.authorizedResources
        default:
            candidates = token.token.resourceID.map { [$0] } ?? []
        }
        for candidate in candidates where matches(candidate, rss: candidates.count == 1 ? token.mediaRSS : nil) {
            return .pass
        }
        let shown = candidates.map { ResourceIdentity.summary(of: $0) }.joined(separator: ", ")
        return .fail(.invalidResourceID, "resource is \(shown), expected \(expectedSummary)")
    }

    private func matches(_ raw: String, rss: MediaRSSResource?) -> Bool {
        if raw == expectedRaw { return true }
        guard let expected else { return false }
        let actual: ResourceIdentity
        if let rss {
            actual = ResourceIdentity(rss: rss)
        } else if MediaRSSResource.looksLikeRSS(raw) {
            return false
        } else {
            actual = ResourceIdentity(channelTitle: raw, itemGUID: nil)
        }
        return actual.matches(expected)
    }
}

/// What identifies a resource: a channel, and maybe one item of it.
struct ResourceIdentity: Sendable, Hashable {
    var channelTitle: String
    var itemGUID: String?

    init(channelTitle: String, itemGUID: String?) {
        self.channelTitle = channelTitle
        self.itemGUID = itemGUID
    }

    init(rss: MediaRSSResource) {
        self.init(channelTitle: rss.channelTitle, itemGUID: rss.itemGUID)
    }

    func matches(_ other: ResourceIdentity) -> Bool {
        guard channelTitle == other.channelTitle else { return false }
        guard let mine = itemGUID, let theirs = other.itemGUID else { return true }
        return mine == theirs
    }

    /// A short form for reasons: `'TNT'` or `RSS channel 'mun2' item 2847811`.
    static func summary(of raw: String) -> String {
        guard MediaRSSResource.looksLikeRSS(raw) else { return "'\(raw)'" }
        let parser = XMLPushParser(configuration: .default)
        guard let rss = try? MediaRSSResource.parse(raw, with: parser).get() else { return "an XML document that is not Media RSS" }
        return "RSS channel '\(rss.channelTitle)'" + (rss.itemGUID.map { " item \($0)" } ?? "")
    }
}
