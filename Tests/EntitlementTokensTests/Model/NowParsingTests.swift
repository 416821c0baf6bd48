import EntitlementTokens
import Testing

/// Issue 20 item 8a: the one reading of "now" every front end uses
/// (docs/DESIGN.md#one-reading-of-now): ISO 8601 or a token date, or an epoch number by magnitude.
@Suite struct NowParsingTests {
    @Test(arguments: [
        // 11 digits are still seconds (the year 5138); 12 are milliseconds (1973).
        ("99999999999", "5138-11-16T09:46:39Z", TokenDateParser.EpochUnit?.some(.seconds)),
        ("100000000000", "1973-03-03T09:46:40Z", .some(.milliseconds)),
        ("1768478580", "2026-01-15T12:03:00Z", .some(.seconds)),
        ("1768478580000", "2026-01-15T12:03:00Z", .some(.milliseconds)),
        ("0", "1970-01-01T00:00:00Z", .some(.seconds)),
        ("2026", "1970-01-01T00:33:46Z", .some(.seconds)),
        ("253402300799999", "9999-12-31T23:59:59.999Z", .some(.milliseconds)),
        ("2026-01-15T12:03:00Z", "2026-01-15T12:03:00Z", nil),
        ("2026-01-15T13:03:00+01:00", "2026-01-15T12:03:00Z", nil),
        ("2026-01-15 04:03:00 -0800", "2026-01-15T12:03:00Z", nil),
    ])
    func nowIsReadByMagnitude(text: String, iso: String, unit: TokenDateParser.EpochUnit?) throws {
        let now = try TokenDateParser.parseNow(text)
        #expect(now.timestamp.iso8601 == iso)
        #expect(now.epochUnit == unit)
    }

    @Test func theBoundaryIsElevenDigits() {
        #expect(TokenDateParser.maximumEpochSecondsDigits == 11)
    }

    @Test(arguments: [
        "", "yesterday", "-1", "+1768478580", "1768478580.5", " 1768478580", "1768478580 ",
        "99999999999999999999", "9999999999999999", "2026-01-15T12:03:00",
    ])
    func whatIsNotANowIsRefused(text: String) {
        #expect(throws: TokenDateParser.Failure.self) { try TokenDateParser.parseNow(text) }
    }
}
