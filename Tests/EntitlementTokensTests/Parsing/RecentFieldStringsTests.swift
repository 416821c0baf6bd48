import Testing

@testable import EntitlementTokens

/// A field's string reused from the document before reads exactly as a string
/// made anew: only the very same bytes get the string made last time.
@Suite struct RecentFieldStringsTests {
    static func string(_ recent: inout RecentFieldStrings, _ bytes: [UInt8], at position: Int) -> String {
        recent.string(bytes.span, at: position)
    }

    @Test func theSameBytesGetTheSameStringAndOtherBytesTheirOwn() {
        var recent = RecentFieldStrings()
        let first = Self.string(&recent, Array("requestorID".utf8), at: 0)
        let again = Self.string(&recent, Array("requestorID".utf8), at: 0)
        #expect(again == "requestorID" && again.hasSameUTF8(as: first))
        #expect(Self.string(&recent, Array("requestorId".utf8), at: 0) == "requestorId")
        // The position that changed now holds the new string; another position is untouched.
        #expect(Self.string(&recent, Array("TNT".utf8), at: 1) == "TNT")
        #expect(Self.string(&recent, Array("requestorId".utf8), at: 0) == "requestorId")
        #expect(Self.string(&recent, Array("TNT".utf8), at: 1) == "TNT")
    }

    @Test func canonicallyEquivalentTextKeepsItsOwnBytes() {
        var recent = RecentFieldStrings()
        let composed = Array("Caf\u{E9}".utf8)
        let decomposed = Array("Cafe\u{301}".utf8)
        #expect(Array(Self.string(&recent, composed, at: 0).utf8) == composed)
        // `==` on strings would call these equal; the bytes are what the token says.
        #expect(Array(Self.string(&recent, decomposed, at: 0).utf8) == decomposed)
        #expect(Array(Self.string(&recent, composed, at: 0).utf8) == composed)
    }

    @Test func invalidUTF8IsRepairedEveryTimeAndNeverMatchesAString() {
        var recent = RecentFieldStrings()
        let invalid: [UInt8] = [0x41, 0xC3, 0x42]
        let repaired = String(decoding: invalid, as: UTF8.self)
        #expect(Self.string(&recent, invalid, at: 0) == repaired)
        #expect(Self.string(&recent, invalid, at: 0) == repaired)
        // The repaired text's own bytes are valid UTF-8, and other bytes than the invalid ones.
        #expect(Array(Self.string(&recent, Array(repaired.utf8), at: 0).utf8) == Array(repaired.utf8))
        #expect(Self.string(&recent, invalid, at: 0) == repaired)
    }

    @Test func longFieldsAndFarPositionsAreMadeEachTimeAndStillRight() {
        var recent = RecentFieldStrings()
        let long = Array(repeating: UInt8(ascii: "x"), count: RecentFieldStrings.maximumBytes + 1)
        #expect(Array(Self.string(&recent, long, at: 0).utf8) == long)
        #expect(Array(Self.string(&recent, long, at: 0).utf8) == long)
        for position in 0..<(RecentFieldStrings.maximumPositions + 3) {
            #expect(Self.string(&recent, Array("p\(position)".utf8), at: position) == "p\(position)")
        }
        for position in 0..<(RecentFieldStrings.maximumPositions + 3) {
            #expect(Self.string(&recent, Array("q\(position)".utf8), at: position) == "q\(position)")
        }
        // A position skipped over (not the next one) is made, not kept, and reads right.
        var sparse = RecentFieldStrings()
        #expect(Self.string(&sparse, Array("far".utf8), at: 5) == "far")
        #expect(Self.string(&sparse, Array("near".utf8), at: 0) == "near")
    }

    /// Raw-form media tokens that differ field by field, in ways a reused
    /// string could get wrong; one decoder reads them in turn, and every field
    /// must be byte for byte what a fresh decoder reads.
    static let documents: [String] = {
        let long = String(repeating: "r", count: RecentFieldStrings.maximumBytes + 10)
        let resources = ["TNT", "Caf\u{E9}", "Cafe\u{301}", "a &amp; b", "a &amp; b", long, long, "TNT", "<![CDATA[TNT]]>"]
        return resources.enumerated().map { index, resource in
            let extra = index % 3 == 1 ? "<extra>\(index)</extra>" : ""
            let guid = index % 2 == 0 ? "same-guid" : "guid-\(index)"
            return "<signatureInfo>c2ln<signatureInfo><authToken><sessionGUID>\(guid)</sessionGUID>\(extra)"
                + "<requestorID>TNT</requestorID><resourceID>\(resource)</resourceID><ttl>420000</ttl>"
                + "<issueTime>2026-01-15 12:00:00 +0000</issueTime><mvpdId>Comcast_SSO</mvpdId></authToken>"
        }
    }()

    @Test func aReusedDecoderReadsEveryFieldAsAFreshOneDoes() throws {
        let reused = TokenDecoder()
        for pass in 0..<2 {
            for document in Self.documents + Self.documents.reversed() {
                let fields = try reused.decode(document).fields
                let fresh = try TokenDecoder().decode(document).fields
                #expect(fields.map { Array($0.path.utf8) } == fresh.map { Array($0.path.utf8) }, "pass \(pass)")
                #expect(fields.map { Array($0.value.utf8) } == fresh.map { Array($0.value.utf8) }, "pass \(pass)")
                #expect(fields.map(\.line) == fresh.map(\.line) && fields.map(\.column) == fresh.map(\.column))
            }
        }
    }
}
