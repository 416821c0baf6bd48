import Testing

@_spi(TokenTestSupport) @testable import EntitlementTokens

/// The framing's one-step path for plain tags (`<name>`, and end tags inside
/// the token element) must read every input exactly as the general path does:
/// it exists only for speed (docs/PERFORMANCE.md, "Internal architecture").
/// The fuzz oracle makes the same comparison on every fuzz input.
@Suite struct FrameScannerPathTests {
    static func expectSamePaths(_ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        let bytes = Array(text.utf8)
        // Whole, byte by byte, and in runs of a few lengths that fall at every kind of place.
        let cutSets: [[Int]] = [[], Array(0..<bytes.count)] + [3, 7, 13, 64].map { Array(stride(from: $0, to: bytes.count, by: $0)) }
        for cuts in cutSets {
            let difference = FramingPathComparison.difference(bytes, cuts: cuts)
            #expect(difference == nil, "\(text.prefix(120)) cut at \(cuts.prefix(8)): \(difference ?? "")", sourceLocation: sourceLocation)
        }
    }

    static let element = Fixtures.mediaElement()
    static let seeds: [String] = [
        Fixtures.legacy(element), Fixtures.closed(element), Fixtures.closed(element, after: true),
        Fixtures.legacy(Fixtures.authenticationElement()), Fixtures.legacy(Fixtures.authorizationElement()),
        "\u{FEFF}<?xml version=\"1.0\"?>\n" + Fixtures.legacy(element),
        Fixtures.legacy(Fixtures.mediaElement(resourceXML: Fixtures.rssResourceInCDATA, extra: "<a b=\"&amp;\">&#x263A;</a><c/><d >x</d >")),
    ]

    @Test func bothPathsReadTheFixturesAlike() {
        for seed in Self.seeds { Self.expectSamePaths(seed) }
    }

    @Test(arguments: HostileInputTests.cases.filter { $0.text.utf8.count < 4096 })
    func bothPathsReadHostileInputsAlike(_ hostile: HostileInputTests.HostileCase) {
        Self.expectSamePaths(hostile.text)
    }

    /// Every seed with one byte of tag syntax put in at every position, or one byte taken out.
    @Test func bothPathsReadEveryOneByteEditAlike() {
        let markup: [UInt8] = Array("<>/ \"'=!?-[]".utf8)
        for seed in Self.seeds.prefix(2) {
            let bytes = Array(seed.utf8)
            for position in 0..<bytes.count {
                var removed = bytes
                removed.remove(at: position)
                Self.expectSamePaths(String(decoding: removed, as: UTF8.self))
                let inserted = markup[position % markup.count]
                var added = bytes
                added.insert(inserted, at: position)
                Self.expectSamePaths(String(decoding: added, as: UTF8.self))
            }
        }
    }
}
