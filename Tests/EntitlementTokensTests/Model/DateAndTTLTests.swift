import Testing

@testable import EntitlementTokens

/// Every date shape of docs/DESIGN.md#dates, with offsets, the GMT decoration, and range checks.
@Suite struct DateAndTTLTests {
    @Test(arguments: [
        ("2011/03/19 02:29:34 GMT +0200", "2011-03-19T00:29:34Z", TokenDateParser.Shape.slashedGMTOffset),
        ("2011/03/19 02:29:34 GMT -0530", "2011-03-19T07:59:34Z", .slashedGMTOffset),
        ("2011/03/19 02:29:34 GMT+0000", "2011-03-19T02:29:34Z", .slashedGMTOffset),
        ("2011/03/19 02:29:34 GMT", "2011-03-19T02:29:34Z", .slashedGMTOffset),
        ("2016-03-17 15:01:31 -0700", "2016-03-17T22:01:31Z", .dashedOffset),
        ("2016-03-17 15:01:31 +05:45", "2016-03-17T09:16:31Z", .dashedOffset),
        ("2016-12-31 23:30:00 -0100", "2017-01-01T00:30:00Z", .dashedOffset),
        ("2016-03-17T22:01:31Z", "2016-03-17T22:01:31Z", .iso8601),
        ("2016-03-17T22:01:31.250Z", "2016-03-17T22:01:31.250Z", .iso8601),
        ("2016-03-17T22:01:31.123456789Z", "2016-03-17T22:01:31.123Z", .iso8601),
        ("2016-03-18T00:01:31+02:00", "2016-03-17T22:01:31Z", .iso8601),
        ("2016-03-17t22:01:31-0100", "2016-03-17T23:01:31Z", .iso8601),
        ("2024-02-29T12:00:00Z", "2024-02-29T12:00:00Z", .iso8601),
        ("2000-02-29T00:00:00Z", "2000-02-29T00:00:00Z", .iso8601),
        ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z", .iso8601),
    ])
    func parsesEveryShape(text: String, iso: String, shape: TokenDateParser.Shape) throws {
        let (timestamp, parsedShape) = try TokenDateParser.parse(text)
        #expect(timestamp.iso8601 == iso)
        #expect(parsedShape == shape)
        // What parses formats back and re-parses to the same instant.
        #expect(try TokenDateParser.parse(timestamp.iso8601).timestamp == timestamp)
    }

    /// `yyyy-MM-dd HH:mm:ss ±hhmm` is read at fixed positions; written `±hh:mm`
    /// the same date takes the general reading. Over every edge of every
    /// field, the two must agree: the same instant, or both refused.
    @Test func theDashedShapeReadsAtFixedPositionsAsTheGeneralReadingDoes() {
        let years = ["0000", "0001", "1970", "2000", "2024", "2100", "9999", "20a6"]
        let months = ["00", "01", "02", "04", "12", "13"]
        let days = ["00", "01", "28", "29", "30", "31", "32"]
        let times = ["00:00:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60", "1x:00:00"]
        let offsets = ["+00", "-00", "+05", "-07", "+14", "-14", "+15", "+1a"]
        let offsetMinutes = ["00", "45", "59", "60", "01"]
        var compared = 0
        for year in years {
            for month in months {
                for day in days {
                    for time in times {
                        for offset in offsets {
                            for minutes in offsetMinutes {
                                let date = "\(year)-\(month)-\(day) \(time) "
                                let fixed = Result { try TokenDateParser.parse(date + offset + minutes) }
                                let general = Result { try TokenDateParser.parse(date + offset + ":" + minutes) }
                                switch (fixed, general) {
                                case (.success(let a), .success(let b)):
                                    #expect(
                                        a.timestamp == b.timestamp && a.shape == .dashedOffset && b.shape == .dashedOffset,
                                        "\(date)\(offset)\(minutes)"
                                    )
                                case (.failure, .failure):
                                    break
                                default:
                                    Issue.record("\(date)\(offset)\(minutes): \(fixed) against \(general)")
                                }
                                compared += 1
                            }
                        }
                    }
                }
            }
        }
        #expect(compared == 8 * 6 * 7 * 6 * 8 * 5)
    }

    /// Epoch milliseconds are for the REST envelope and `--now` (docs/DESIGN.md#dates), through their own entry point.
    @Test(arguments: [
        ("1458252091000", "2016-03-17T22:01:31Z"), ("0", "1970-01-01T00:00:00Z"), ("2026", "1970-01-01T00:00:02.026Z"),
        ("253402300799999", "9999-12-31T23:59:59.999Z"),
    ])
    func epochMillisecondsAreForTheEnvelopeAndNowOnly(text: String, iso: String) throws {
        let (timestamp, shape) = try TokenDateParser.parseAllowingEpochMilliseconds(text)
        #expect(timestamp.iso8601 == iso)
        #expect(shape == .epochMilliseconds)
        #expect(throws: TokenDateParser.Failure.self) { try TokenDateParser.parse(text) }
        #expect(!TokenDateParser.Shape.tokenFieldShapes.contains(.epochMilliseconds))
    }

    /// docs/DESIGN.md#dates: an `issueTime` of `2026` is malformed, not 1970; so is any
    /// number in any date field of any kind.
    @Test(arguments: ["2026", "1700000000000", "0"])
    func aNumberInATokenDateFieldIsMalformed(number: String) {
        let tokens = [
            ("issueTime", Fixtures.legacy(Fixtures.mediaElement(issueTime: number))),
            ("simpleTokenExpires", Fixtures.legacy(Fixtures.authenticationElement(expires: number))),
            ("simpleTokenTTL", Fixtures.legacy(Fixtures.authorizationElement(ttl: number))),
        ]
        for (field, token) in tokens {
            do {
                _ = try Fixtures.decode(token)
                Issue.record("\(field) '\(number)' decoded")
            } catch {
                #expect(error.code == .invalidFieldValue, "\(field)")
                #expect(error.message.contains(field))
                #expect(error.message.contains("epoch milliseconds"))
            }
            let verdict = TokenVerifier(signature: .insecureSkipped).verify(token)
            #expect(verdict.status == .invalidTokenFormat, "\(field)")
        }
    }

    @Test(arguments: [
        "", " 2016-03-17T22:01:31Z", "2016-03-17T22:01:31Z ", "2016-03-17T22:01:31",  // no zone
        "2016-13-17T22:01:31Z", "2016-00-10T22:01:31Z", "2015-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
        "2016-04-31T00:00:00Z", "2016-03-17T24:00:00Z", "2016-03-17T23:60:00Z", "2016-03-17T23:59:60Z",
        "2016-03-17T22:01:31+15:00", "2016-03-17T22:01:31+01:60", "2016-03-17T22:01:31.Z",
        "2016/03/17 15:01:31 -0700",  // slashed date needs GMT
        "2016-03-17 15:01:31 GMT +0200",  // dashed date has no GMT
        "2011/03/19 02:29:34 GMT +02:00",  // colon not used in this shape
        "2016/03-17 15:01:31 -0700", "16-03-17 15:01:31 -0700", "2016-03-17 15:01 -0700",
        "-1458252091000", "1458252091000.5", "253402300800000", "99999999999999999999",
        "0000-01-01T00:00:00Z", "0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01",
        "２０１６-03-17T22:01:31Z",
    ])
    func refusesMalformedDates(text: String) {
        #expect(throws: TokenDateParser.Failure.self) { try TokenDateParser.parse(text) }
    }

    @Test func isoFormattingAcrossEras() {
        for milliseconds: Int64 in [-62_135_596_800_000, -1, 0, 1, 951_782_400_000, 253_402_300_799_999] {
            let timestamp = TokenTimestamp(millisecondsSince1970: milliseconds)!
            #expect((try? TokenDateParser.parse(timestamp.iso8601).timestamp) == timestamp)
        }
        #expect(TokenTimestamp(millisecondsSince1970: -1)!.iso8601 == "1969-12-31T23:59:59.999Z")
        #expect(TokenTimestamp(millisecondsSince1970: 253_402_300_800_000) == nil)
    }

    @Test(arguments: [
        ("0", Int64(0)), ("420000", 420_000), ("9223372036854775807", Int64.max),
        ("000420000", 420_000),
    ])
    func ttlEdgeValuesThatParse(ttl: String, milliseconds: Int64) throws {
        // Int64.max overflows the expiry; use an early issue time to separate the two checks.
        let element = Fixtures.mediaElement(ttl: ttl, issueTime: "2016-03-17 15:01:31 -0700")
        let result = Result { try Fixtures.decode(Fixtures.legacy(element)) }
        if milliseconds > 1_000_000_000_000_000 {
            #expect(Fixtures.errorCode(Fixtures.legacy(element)) == .invalidFieldValue)
            #expect(throws: TokenError.self) { try result.get() }
        } else {
            guard case .media(let media) = try result.get().token else {
                Issue.record("not media")
                return
            }
            #expect(media.ttlMilliseconds == milliseconds)
            #expect(media.expiry.millisecondsSince1970 == media.issueTime.millisecondsSince1970 + milliseconds)
        }
    }

    @Test(arguments: [
        "-1", "+420000", "42e4", "420000.0", " 420000", "420000 ", "", "0x10", "9223372036854775808",
        "99999999999999999999999", "４２０",
    ])
    func ttlValuesThatAreMalformed(ttl: String) {
        let token = Fixtures.legacy(Fixtures.mediaElement(ttl: ttl))
        #expect(Fixtures.errorCode(token) == .invalidFieldValue)
    }

    @Test func ttlWhoseExpiryIsNotRepresentable() {
        // Fits in 63 bits, but issueTime + ttl is past year 9999.
        let token = Fixtures.legacy(Fixtures.mediaElement(ttl: "253402300799999", issueTime: "2016-03-17T22:01:31Z"))
        #expect(Fixtures.errorCode(token) == .invalidFieldValue)
    }

    @Test func malformedIssueTimeIsAFieldError() {
        do {
            _ = try Fixtures.decode(Fixtures.legacy(Fixtures.mediaElement(issueTime: "yesterday")))
            Issue.record("decoded")
        } catch {
            #expect(error.code == .invalidFieldValue)
            #expect(error.message.contains("issueTime"))
            #expect(error.location?.line == 1)
            #expect((error.location?.byteOffset ?? 0) > 0)
        }
    }

    @Test func fingerprintsOfEverySizeAndMalformedOnes() throws {
        for length in [32, 40, 64] {
            let fingerprint = String(repeating: "a1", count: length / 2)
            let element = Fixtures.authorizationElement().replacingOccurrences(of: "3d1b7ac38fae5c1b4e5c1e8f8a0f3c2b9d4e6f10", with: fingerprint)
            #expect(try Fixtures.decode(Fixtures.legacy(element)).token.fingerprint == fingerprint)
        }
        for bad in ["ABCDEF0123456789ABCDEF0123456789", "xyz", String(repeating: "a", count: 33)] {
            let element = Fixtures.authorizationElement().replacingOccurrences(of: "3d1b7ac38fae5c1b4e5c1e8f8a0f3c2b9d4e6f10", with: bad)
            #expect(Fixtures.errorCode(Fixtures.legacy(element)) == .invalidFieldValue)
        }
    }
}
