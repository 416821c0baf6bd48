import Testing

@testable import CDNTokens

@Suite("CBOR reading, writing and diagnostic notation (RFC 8949)")
struct CBORTests {
    private func read(_ hex: String, limits: CBORLimits = .commonAccessToken) throws(CBORError) -> CBORValue {
        try CBORValue(cbor: CATFixtures.hex(hex), limits: limits)
    }

    private func code(_ bytes: [UInt8], limits: CBORLimits = .commonAccessToken) -> CBORError.Code? {
        do {
            _ = try CBORValue(cbor: bytes, limits: limits)
            return nil
        } catch {
            return error.code
        }
    }

    // RFC 8949 Appendix A examples: bytes → diagnostic, and back to the same bytes.
    @Test(
        "RFC 8949 Appendix A items read, print and write back",
        arguments: [
            ("00", "0"), ("17", "23"), ("1818", "24"), ("1903e8", "1000"), ("1a000f4240", "1000000"),
            ("1b000000e8d4a51000", "1000000000000"), ("1bffffffffffffffff", "18446744073709551615"),
            ("20", "-1"), ("3903e7", "-1000"), ("3b7fffffffffffffff", "-9223372036854775808"),
            ("f4", "false"), ("f5", "true"), ("f6", "null"), ("f7", "undefined"), ("f0", "simple(16)"), ("f8ff", "simple(255)"),
            ("40", "h''"), ("4401020304", "h'01020304'"), ("60", "\"\""), ("6161", "\"a\""), ("62225c", "\"\\\"\\\\\""),
            ("62c3bc", "\"\\u00fc\""), ("64f0908591", "\"\\ud800\\udd51\""), ("80", "[]"), ("83010203", "[1, 2, 3]"),
            ("a201020304", "{1: 2, 3: 4}"), ("c074323031332d30332d32315432303a30343a30305a", "0(\"2013-03-21T20:04:00Z\")"),
            ("d818456449455446", "24(h'6449455446')"), ("f93c00", "1.0_1"), ("fa47c35000", "100000.0_2"),
            ("fb3ff199999999999a", "1.1_3"), ("f97c00", "Infinity_1"), ("f97e00", "NaN_1"), ("f9fc00", "-Infinity_1"),
        ]
    )
    func appendixA(_ hex: String, _ diagnostic: String) throws {
        let value = try read(hex)
        #expect(value.diagnostic() == diagnostic)
        #expect(value.cbor() == CATFixtures.hex(hex))
    }

    @Test("a non-preferred (overlong) head is read; writing gives the preferred form")
    func overlongHeadsAreReadAndWrittenShort() throws {
        // node-cat writes b9 0001 for a one-pair map.
        let value = try read("b900010118ff")
        #expect(value == .map([CBORMapEntry(.integer(1), .integer(255))]))
        #expect(value.cbor() == CATFixtures.hex("a10118ff"))
        #expect(try read("1b0000000000000001") == .integer(1))
    }

    @Test(
        "writing uses the shortest head at each boundary",
        arguments: [
            (Int64(23), "17"), (24, "1818"), (255, "18ff"), (256, "190100"), (65535, "19ffff"), (65536, "1a00010000"),
            (4_294_967_295, "1affffffff"), (4_294_967_296, "1b0000000100000000"), (-24, "37"), (-25, "3818"), (Int64.min, "3b7fffffffffffffff"),
        ]
    )
    func shortestHeads(_ value: Int64, _ hex: String) {
        #expect(CBORValue.integer(value).cbor() == CATFixtures.hex(hex))
    }

    @Test("diagnostic notation names claims from labels, nested")
    func diagnosticLabels() throws {
        let value = try read("a30164746ec3a3041a6968d6c0190138a103a101692f686c732f746e742f")
        let labels = CATClaim.diagnosticLabels
        #expect(
            value.diagnostic(labels: labels) == "{1 /iss/: \"tn\\u00e3\", 4 /exp/: 1768478400, 312 /catu/: {3 /path/: {1 /prefix/: \"/hls/tnt/\"}}}"
        )
    }

    @Test("text with controls and bidi overrides prints as ASCII escapes")
    func diagnosticEscapesText() {
        #expect(CBORValue.text("a\n\u{202E}\u{1B}[31m").diagnostic() == "\"a\\u000a\\u202e\\u001b[31m\"")
    }

    // MARK: Hostile input: each limit refused with its code, never a trap.

    @Test("nesting 16 deep is read; 17 deep is refused (tooDeep)")
    func depth() {
        let sixteen = [UInt8](repeating: 0x81, count: 15) + [0x00]
        #expect(code(sixteen) == nil)
        #expect(code([UInt8](repeating: 0x81, count: 16) + [0x00]) == .tooDeep)
        #expect(code([UInt8](repeating: 0xC1, count: 16) + [0x00]) == .tooDeep, "tags count as levels")
        #expect(code([UInt8](repeating: 0x81, count: 100_000) + [0x00], limits: CBORLimits(maximumInputBytes: 200_000)) == .tooDeep)
    }

    @Test("8 KiB is read; 8 KiB + 1 is refused (tooLarge)")
    func size() {
        let payload = 8192 - 3
        let fits = [0x59, UInt8(payload >> 8), UInt8(payload & 0xFF)] + [UInt8](repeating: 0x41, count: payload)
        #expect(fits.count == 8192)
        #expect(code(fits) == nil)
        let over = [0x59, UInt8((payload + 1) >> 8), UInt8((payload + 1) & 0xFF)] + [UInt8](repeating: 0x41, count: payload + 1)
        #expect(code(over) == .tooLarge)
    }

    @Test("indefinite lengths and stray breaks are refused", arguments: ["5f4101ff", "7f6161ff", "9f01ff", "bf0102ff", "ff", "8101ff"])
    func indefinite(_ hex: String) {
        let result = code(CATFixtures.hex(hex))
        #expect(result == .indefiniteLength || (hex == "8101ff" && result == .trailingBytes))
    }

    @Test("duplicate map keys are refused, however they are written")
    func duplicateKeys() {
        #expect(code(CATFixtures.hex("a201020103")) == .duplicateMapKey)
        #expect(code(CATFixtures.hex("a20102180103")) == .duplicateMapKey, "1 and the overlong 18 01 are the same key")
        #expect(code(CATFixtures.hex("a2616101616102")) == .duplicateMapKey)
        #expect(code(CATFixtures.hex("a201020203")) == nil)
    }

    @Test("text that is not UTF-8 is refused", arguments: ["62c328", "61ff", "63eda080", "62c0af", "64f4908080"])
    func invalidUTF8(_ hex: String) {
        #expect(code(CATFixtures.hex(hex)) == .invalidUTF8)
    }

    @Test("trailing bytes are refused")
    func trailing() {
        #expect(code([0x01, 0x02]) == .trailingBytes)
        #expect(code([0xA0, 0x00]) == .trailingBytes)
    }

    @Test(
        "a huge declared length with few bytes is refused before allocating",
        arguments: [
            "5bffffffffffffffff00", "7bffffffffffffffff61", "9bffffffffffffffff01", "bbffffffffffffffff0102", "5a7fffffff", "9a7fffffff00",
        ]
    )
    func hugeDeclaredLengths(_ hex: String) {
        #expect(code(CATFixtures.hex(hex)) == .truncated)
    }

    @Test("a negative integer below Int64.min is refused, not wrapped")
    func integerOverflow() {
        #expect(code(CATFixtures.hex("3b8000000000000000")) == .integerOverflow)
        #expect(code(CATFixtures.hex("3bffffffffffffffff")) == .integerOverflow)
        #expect(code(CATFixtures.hex("1bffffffffffffffff")) == nil)
    }

    @Test("truncated items, reserved additional information and two-byte small simple values are refused")
    func malformed() {
        #expect(code([]) == .truncated)
        #expect(code([0x19, 0x01]) == .truncated)
        #expect(code([0x82, 0x01]) == .truncated)
        #expect(code([0x1C]) == .reservedAdditionalInformation)
        #expect(code([0xFC]) == .reservedAdditionalInformation)
        #expect(code([0xF8, 0x10]) == .malformedSimpleValue)
        #expect(code([0xFB, 0x00]) == .truncated)
    }

    @Test("an error names its offset")
    func errorOffset() {
        do {
            _ = try CBORValue(cbor: [0x82, 0x01, 0x61, 0xFF])
            Issue.record("read invalid UTF-8")
        } catch {
            #expect(error.offset == 2)
            #expect(error.description.hasPrefix("CBOR byte 2: "))
        }
    }
}
