/// `INVALID_RESOURCE_ID` when the token is for another resource (docs/DESIGN.md#statuses).
///
/// The same bytes match. Otherwise both sides are read as Media RSS — a bare
/// id `TNT` means a channel titled `TNT` — and they match when the channel
/// titles are the same bytes and, if both name an item guid, the guids are.
/// An authentication token matches when any of its authorized resources does,
/// each read the same way; one that names no resource grants none. A Media RSS
/// document that is ambiguous (two channels, two items, two titles or guids in
/// one scope) or not Media RSS at all matches only byte for byte.
struct ResourcePolicy: TokenPolicy {
    var expectedRaw: String
    /// The expectation's identity, or why only its exact bytes can match.
    var expected: Result<ResourceIdentity, TokenError>
    /// How reasons name the expectation; fixed, so described once, not per refused token.
    var expectedSummary: String
    /// The decoder's limits, for reading resources that are not a token's `resourceID`.
    var configuration: DecoderConfiguration
    var check: VerificationCheck { .resource }

    /// Reasons name at most this many of an authentication token's resources.
    private static let resourcesNamed = 3

    init(expected raw: String, configuration: DecoderConfiguration) {
        expectedRaw = raw
        self.configuration = configuration
        expected = ResourceIdentity.reading(raw) { MediaRSSResource.reading(of: raw, configuration: configuration) }
        switch expected {
        case .success(let identity): expectedSummary = identity.summary
        case .failure(let error): expectedSummary = ResourceIdentity.opaqueSummary(raw, error)
        }
    }

    func evaluate(_ token: DecodedToken, now: TokenTimestamp) -> PolicyResult {
        switch token.token {
        case .authentication(let authN):
            let resources = authN.authorizedResources
            guard !resources.isEmpty else {
                return .fail(.invalidResourceID, "the authentication token names no resource, so it grants none (expected \(expectedSummary))")
            }
            var reasons: [String] = []
            for resource in resources {
                guard let reason = mismatch(resource, reading: { MediaRSSResource.reading(of: resource, configuration: configuration) }) else {
                    return .pass
                }
                if reasons.count < Self.resourcesNamed { reasons.append(reason) }
            }
            if resources.count == 1 { return .fail(.invalidResourceID, reasons[0]) }
            let more = resources.count > reasons.count ? "; and \(resources.count - reasons.count) more" : ""
            return .fail(
                .invalidResourceID,
                "none of the token's \(resources.count) authorized resources is the expected one: "
                    + reasons.joined(separator: "; ") + more
            )
        case .media, .authorization:
            guard let resource = token.token.resourceID else {
                return .fail(.invalidResourceID, "the token names no resource (expected \(expectedSummary))")
            }
            // The token's own reading, parsed once and shared; parsed again only to say why it failed.
            let reason = mismatch(
                resource,
                reading: {
                    token.mediaRSS.map { .success($0) } ?? MediaRSSResource.reading(of: resource, configuration: configuration)
                }
            )
            return reason.map { .fail(.invalidResourceID, $0) } ?? .pass
        }
    }

    /// Nil when `raw`, a resource the token names, is the expected one;
    /// otherwise what differs, in words that never contradict themselves.
    private func mismatch(_ raw: String, reading: () -> Result<MediaRSSResource, TokenError>) -> String? {
        if raw.hasSameUTF8(as: expectedRaw) { return nil }
        let actual: ResourceIdentity
        switch ResourceIdentity.reading(raw, reading) {
        case .success(let identity):
            actual = identity
        case .failure(let error):
            return
                "resource is \(ResourceIdentity.opaqueSummary(raw, error)), so only the exact bytes of the expected resource (\(expectedSummary)) would match"
        }
        switch expected {
        case .failure:
            return "resource is \(actual.summary), expected \(expectedSummary), which only its exact bytes match"
        case .success(let expected):
            return actual.mismatch(expected)
        }
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

    /// A bare id is the channel of that title; text that looks like XML is read
    /// as Media RSS by `rss` (parsed only then), and fails when it is not usable.
    static func reading(_ raw: String, _ rss: () -> Result<MediaRSSResource, TokenError>) -> Result<ResourceIdentity, TokenError> {
        guard MediaRSSResource.looksLikeRSS(raw) else { return .success(ResourceIdentity(channelTitle: raw, itemGUID: nil)) }
        return rss().map(ResourceIdentity.init(rss:))
    }

    /// Nil when the two match (same channel bytes, and same guid bytes when
    /// both name one); otherwise the part that differs.
    func mismatch(_ expected: ResourceIdentity) -> String? {
        guard channelTitle.hasSameUTF8(as: expected.channelTitle) else {
            return "resource is channel \(channelTitle.quotedID(beside: expected.channelTitle)), "
                + "expected channel \(expected.channelTitle.quotedID(beside: channelTitle))"
        }
        guard let mine = itemGUID, let theirs = expected.itemGUID, !mine.hasSameUTF8(as: theirs) else { return nil }
        return "resource is item guid \(mine.quotedID(beside: theirs)) of channel '\(channelTitle)', "
            + "expected item guid \(theirs.quotedID(beside: mine))"
    }

    /// A short form for reasons: `channel 'TNT'` or `channel 'mun2' item guid '2847811'`.
    var summary: String {
        "channel '\(channelTitle)'" + (itemGUID.map { " item guid '\($0)'" } ?? "")
    }

    /// How reasons name a resource that can only match byte for byte.
    static func opaqueSummary(_ raw: String, _ error: TokenError) -> String {
        if error.code == .ambiguousMediaRSS { return "ambiguous Media RSS (\(error.message))" }
        return "XML that is not Media RSS (\(error.message))"
    }
}
