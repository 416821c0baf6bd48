import EntitlementTokens

#if canImport(Glibc)
import Glibc
#endif

/// FuzzDates: every date shape the tokens use (docs/FORMAT.md, "Dates").
///
/// 1. The input as text, through both entry points: a token field's
///    (`parse`, never epoch milliseconds — docs/DESIGN.md#dates) and the envelope's and
///    `--now`'s (`parseAllowingEpochMilliseconds`). They agree on every text
///    a token field takes, and differ exactly on epoch milliseconds. What
///    parses must format back — in its own shape, as ISO 8601, and in every
///    other shape that can hold it — and re-parse to the same instant (to the
///    second for shapes without a fraction). The instant must also agree with
///    glibc's `timegm` over the same fields.
/// 2. The input's first bytes as an instant and an offset: every shape the
///    formatter writes must re-parse to it, and `iso8601` must agree with
///    glibc's `gmtime_r`.
public enum DateOracle {
    public static let target = "FuzzDates"

    public static func check(_ input: [UInt8]) {
        checkText(String(decoding: input, as: UTF8.self))
        checkInstant(from: input)
    }

    static func fail(_ message: String) -> Never { oracleFailure(target, message) }

    /// The envelope's and `--now`'s reading: every shape.
    static func parse(_ text: String) -> (timestamp: TokenTimestamp, shape: TokenDateParser.Shape)? {
        try? TokenDateParser.parseAllowingEpochMilliseconds(text)
    }

    /// A token field's reading: never epoch milliseconds.
    static func parseTokenField(_ text: String) -> (timestamp: TokenTimestamp, shape: TokenDateParser.Shape)? {
        try? TokenDateParser.parse(text)
    }

    public static func checkText(_ text: String) {
        let field = parseTokenField(text)
        if let field, field.shape == .epochMilliseconds { fail("'\(escaped(text))' parsed as epoch milliseconds in a token field") }
        guard let (timestamp, shape) = parse(text) else {
            if field != nil { fail("'\(escaped(text))' parses as a token field but not as an envelope date") }
            return
        }
        if shape == .epochMilliseconds {
            if field != nil { fail("'\(escaped(text))' is epoch milliseconds, yet a token field took it") }
        } else if field?.timestamp != timestamp || field?.shape != shape {
            fail(
                "'\(escaped(text))' reads as \(shape) at \(timestamp.millisecondsSince1970) ms for the envelope, but as \(String(describing: field)) in a token field"
            )
        }
        let ms = timestamp.millisecondsSince1970
        guard TokenTimestamp(millisecondsSince1970: ms) != nil else { fail("'\(escaped(text))' parsed outside 0001-9999: \(ms)") }
        if text.utf8.contains(where: { $0 >= 0x80 || $0 < 0x20 }) { fail("'\(escaped(text))' parsed, with non-ASCII or control bytes in it") }

        // In its own shape, at UTC.
        let own = timestamp.formatted(shape)
        guard let back = parse(own) else { fail("'\(escaped(text))' parsed as \(shape) at \(ms) ms, but its formatting '\(own)' does not parse") }
        if back.shape != shape { fail("'\(escaped(text))' is \(shape), but its formatting '\(own)' parses as \(back.shape)") }
        if back.timestamp != timestamp { fail("'\(escaped(text))' → \(ms) ms → '\(own)' → \(back.timestamp.millisecondsSince1970) ms") }

        checkFormats(timestamp, offsetMinutes: 0, origin: "'\(escaped(text))'")
        checkAgainstLibc(text, shape: shape, milliseconds: ms)
    }

    /// Every shape at `offsetMinutes` re-parses to the instant (whole seconds
    /// for the shapes that have no fraction), whenever the local date is
    /// still within years 0001-9999.
    static func checkFormats(_ timestamp: TokenTimestamp, offsetMinutes: Int64, origin: String) {
        let ms = timestamp.millisecondsSince1970
        let wholeSeconds = ms - floorMod(ms, 1000)

        let iso = timestamp.iso8601
        guard let isoBack = parseTokenField(iso), isoBack.shape == .iso8601, isoBack.timestamp == timestamp else {
            fail("\(origin): \(ms) ms → iso8601 '\(iso)' does not re-parse to the same instant (\(String(describing: parse(iso))))")
        }
        if let reference = libcISO8601(ms), reference != iso {
            fail("\(origin): \(ms) ms → iso8601 '\(iso)', but gmtime_r says '\(reference)'")
        }
        if ms >= 0 {
            let epoch = timestamp.formatted(.epochMilliseconds)
            guard let back = parse(epoch), back.shape == .epochMilliseconds, back.timestamp == timestamp else {
                fail("\(origin): \(ms) ms → epoch '\(epoch)' does not re-parse to the same instant")
            }
            if parseTokenField(epoch) != nil { fail("\(origin): epoch '\(epoch)' parses as a token field") }
        }
        let localYear = year(ofSeconds: floorDiv(ms, 1000) + offsetMinutes * 60)
        guard (1...9999).contains(localYear) else { return }
        for shape in [TokenDateParser.Shape.slashedGMTOffset, .dashedOffset] {
            let text = timestamp.formatted(shape, offsetMinutes: offsetMinutes)
            guard let back = parseTokenField(text) else {
                fail("\(origin): \(ms) ms at offset \(offsetMinutes) min → '\(text)' does not parse")
            }
            if back.shape != shape || back.timestamp.millisecondsSince1970 != wholeSeconds {
                fail(
                    "\(origin): \(ms) ms at offset \(offsetMinutes) min → '\(text)' → \(back.timestamp.millisecondsSince1970) ms as \(back.shape) (expected \(wholeSeconds) as \(shape))"
                )
            }
        }
    }

    /// The instant and offset from the raw bytes: 8 bytes of milliseconds
    /// folded into years 0001-9999, then 2 bytes of offset within ±14:00.
    static func checkInstant(from input: [UInt8]) {
        guard input.count >= 10 else { return }
        var raw: UInt64 = 0
        for byte in input[0..<8] { raw = raw << 8 | UInt64(byte) }
        let span = UInt64(TokenTimestamp.latest.millisecondsSince1970 - TokenTimestamp.earliest.millisecondsSince1970 + 1)
        let ms = TokenTimestamp.earliest.millisecondsSince1970 + Int64(raw % span)
        let offset = Int64((Int(input[8]) << 8 | Int(input[9])) % 1681) - 840
        guard let timestamp = TokenTimestamp(millisecondsSince1970: ms) else { fail("\(ms) ms should be in range") }
        checkFormats(timestamp, offsetMinutes: offset, origin: "instant")
    }

    // MARK: - An independent reading, through glibc

    /// Reads the fixed-position fields of the three calendar shapes and
    /// computes the instant with `timegm`; it must equal the parser's.
    static func checkAgainstLibc(_ text: String, shape: TokenDateParser.Shape, milliseconds: Int64) {
        let bytes = Array(text.utf8)
        if shape == .epochMilliseconds {
            if Int64(text) != milliseconds { fail("'\(escaped(text))' as epoch gives \(milliseconds)") }
            return
        }
        guard bytes.count >= 19 else { fail("'\(escaped(text))' parsed as \(shape) but is shorter than a date and time") }
        func number(_ range: Range<Int>) -> Int64 {
            bytes[range].reduce(0) { $0 * 10 + Int64($1) - 48 }
        }
        var fields = tm()
        fields.tm_year = Int32(number(0..<4) - 1900)
        fields.tm_mon = Int32(number(5..<7) - 1)
        fields.tm_mday = Int32(number(8..<10))
        fields.tm_hour = Int32(number(11..<13))
        fields.tm_min = Int32(number(14..<16))
        fields.tm_sec = Int32(number(17..<19))
        let local = Int64(timegm(&fields))
        // What follows the seconds: an optional fraction, then Z, GMT, or an offset.
        var rest = Array(bytes[19...])
        var fraction: Int64 = 0
        if let first = rest.first, first == UInt8(ascii: ".") || first == UInt8(ascii: ",") {
            let digits = rest.dropFirst().prefix { (48...57).contains($0) }
            for (index, digit) in digits.prefix(3).enumerated() {
                fraction += Int64(digit - 48) * [100, 10, 1][index]
            }
            rest = Array(rest.dropFirst(1 + digits.count))
        }
        var offsetMinutes: Int64 = 0
        if let sign = rest.firstIndex(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }) {
            let digits = rest[(sign + 1)...].filter { (48...57).contains($0) }
            guard digits.count == 4 else { fail("'\(escaped(text))' parsed with an offset of \(digits.count) digits") }
            offsetMinutes = (Int64(digits[0] - 48) * 10 + Int64(digits[1] - 48)) * 60 + Int64(digits[2] - 48) * 10 + Int64(digits[3] - 48)
            if rest[sign] == UInt8(ascii: "-") { offsetMinutes = -offsetMinutes }
        }
        let expected = (local - offsetMinutes * 60) * 1000 + fraction
        if expected != milliseconds {
            fail("'\(escaped(text))' parsed as \(milliseconds) ms (\(shape)); timegm over the same fields gives \(expected) ms")
        }
    }

    static func libcISO8601(_ ms: Int64) -> String? {
        var seconds = time_t(floorDiv(ms, 1000))
        var fields = tm()
        guard gmtime_r(&seconds, &fields) != nil else { return nil }
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        var text = "\(pad(Int64(fields.tm_year) + 1900, 4))-\(pad(Int64(fields.tm_mon) + 1, 2))-\(pad(Int64(fields.tm_mday), 2))"
        text += "T\(pad(Int64(fields.tm_hour), 2)):\(pad(Int64(fields.tm_min), 2)):\(pad(Int64(fields.tm_sec), 2))"
        let fraction = floorMod(ms, 1000)
        if fraction != 0 { text += ".\(pad(fraction, 3))" }
        return text + "Z"
    }

    static func year(ofSeconds seconds: Int64) -> Int64 {
        var time = time_t(seconds)
        var fields = tm()
        guard gmtime_r(&time, &fields) != nil else { return 0 }
        return Int64(fields.tm_year) + 1900
    }

    static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    static func floorMod(_ value: Int64, _ divisor: Int64) -> Int64 {
        let remainder = value % divisor
        return remainder < 0 ? remainder + divisor : remainder
    }
}
