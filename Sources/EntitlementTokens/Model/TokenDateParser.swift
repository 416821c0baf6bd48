/// Parses every date shape seen in tokens (docs/DESIGN.md#dates).
///
/// | shape | example | where |
/// |---|---|---|
/// | ``Shape/slashedGMTOffset`` | `2011/03/19 02:29:34 GMT +0200` | authN/authZ expiry: local time at that offset; `GMT` is decoration |
/// | ``Shape/dashedOffset`` | `2016-03-17 15:01:31 -0700` | media `issueTime` |
/// | ``Shape/iso8601`` | `2016-03-17T22:01:31.250Z`, `…+02:00` | newer services |
/// | ``Shape/epochMilliseconds`` | `1458252091000` | REST `expires`, `--now`: never a token field |
///
/// Token fields take the first three shapes only (docs/DESIGN.md#dates): an `issueTime` of
/// `2026` is malformed, not 1970. ``parse(_:)`` reads a token field;
/// ``parseNow(_:)`` reads "now" for every front end (the CLI's `--now`, the
/// gate's `now=` and the debugger's), where people paste `$(date +%s)` as
/// often as epoch milliseconds.
///
/// Strict: every field is range-checked (month, day of that month, hour,
/// minute, second, offset up to ±14:00), a zone is required, and nothing
/// may surround the text — a date that is almost right is refused, not guessed.
public enum TokenDateParser {
    /// The ways a date is written in tokens (see the table above).
    public enum Shape: String, Sendable, Hashable, CaseIterable {
        case slashedGMTOffset = "yyyy/MM/dd HH:mm:ss GMT ±hhmm"
        case dashedOffset = "yyyy-MM-dd HH:mm:ss ±hhmm"
        case iso8601 = "ISO 8601"
        case epochMilliseconds = "epoch milliseconds"

        /// The shapes a token field may take: every shape but epoch milliseconds.
        public static let tokenFieldShapes: [Shape] = [.slashedGMTOffset, .dashedOffset, .iso8601]
    }

    /// Why a text is not a date.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The text that was read (may be input: escape it before a terminal).
        public var text: String
        /// What was expected where.
        public var reason: String
        public var description: String { "'\(text)' is not a date: \(reason)" }
    }

    /// A date in a token field: one of ``Shape/tokenFieldShapes``.
    public static func parse(_ text: String) throws(Failure) -> (timestamp: TokenTimestamp, shape: Shape) {
        try parse(text, allowingEpochMilliseconds: false)
    }

    /// How ``parseNow(_:)`` read an epoch number; `nil` there means a date was written.
    public enum EpochUnit: String, Sendable, Hashable {
        case seconds = "epoch seconds"
        case milliseconds = "epoch milliseconds"
    }

    /// The longest epoch number ``parseNow(_:)`` reads as seconds: 11 digits
    /// reach the year 5138, while milliseconds need 12 digits from 2001-09-09 on,
    /// so the magnitude alone tells them apart for any date anyone means.
    public static let maximumEpochSecondsDigits = 11

    /// "Now" as a person or a test gives it, read the same way by every front
    /// end (docs/DESIGN.md#one-reading-of-now): a token field's shapes (ISO 8601 among them), or an
    /// epoch number read by magnitude — up to ``maximumEpochSecondsDigits``
    /// digits are seconds, more are milliseconds. `epochUnit` says which was
    /// read, for the note a front end shows (people cannot see it in the digits).
    public static func parseNow(_ text: String) throws(Failure) -> (timestamp: TokenTimestamp, epochUnit: EpochUnit?) {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.allSatisfy(\.isASCIIDigit) else {
            return (try parse(text, allowingEpochMilliseconds: false).timestamp, nil)
        }
        let unit: EpochUnit = bytes.count <= maximumEpochSecondsDigits ? .seconds : .milliseconds
        guard bytes.count <= 18, let value = Int64(text),
            let timestamp = TokenTimestamp(millisecondsSince1970: unit == .seconds ? value * 1000 : value)
        else {
            throw Failure(text: text, reason: "\(unit.rawValue) beyond the year 9999")
        }
        return (timestamp, unit)
    }

    /// A token field's shapes or epoch milliseconds whatever their magnitude:
    /// the fuzz oracle's second reading of a date, which checks that token
    /// fields never take a number. Front ends read "now" with ``parseNow(_:)``.
    package static func parseAllowingEpochMilliseconds(_ text: String) throws(Failure) -> (timestamp: TokenTimestamp, shape: Shape) {
        try parse(text, allowingEpochMilliseconds: true)
    }

    private static func parse(_ text: String, allowingEpochMilliseconds: Bool) throws(Failure) -> (timestamp: TokenTimestamp, shape: Shape) {
        // The text's own UTF-8, read in place: a date is parsed once per token.
        let bytes = text.utf8.span
        if let timestamp = dashedOffsetAtFixedPositions(bytes) { return (timestamp, .dashedOffset) }
        var cursor = Cursor(text: text)
        guard !bytes.isEmpty else { throw Failure(text: text, reason: "empty") }
        if Self.isAllDigits(bytes) {
            guard allowingEpochMilliseconds else {
                throw Failure(
                    text: text,
                    reason: "a token date is written as a date and time with a zone; epoch milliseconds belong to the REST envelope and --now only"
                )
            }
            guard bytes.count <= 18, let value = Int64(text), let timestamp = TokenTimestamp(millisecondsSince1970: value) else {
                throw Failure(text: text, reason: "epoch milliseconds beyond year 9999")
            }
            return (timestamp, .epochMilliseconds)
        }
        let year = try cursor.digits(bytes, 4, "year")
        let separator = try cursor.byte(bytes, oneOf: UInt8(ascii: "/"), UInt8(ascii: "-"), "'/' or '-' after the year")
        let month = try cursor.digits(bytes, 2, "month")
        try cursor.expect(bytes, separator, "the same separator after the month")
        let day = try cursor.digits(bytes, 2, "day")
        let shape: Shape
        switch cursor.next(bytes) {
        case UInt8(ascii: " "): shape = separator == UInt8(ascii: "/") ? .slashedGMTOffset : .dashedOffset
        case UInt8(ascii: "T"), UInt8(ascii: "t"):
            guard separator == UInt8(ascii: "-") else { throw cursor.failure("'T' only follows a yyyy-MM-dd date") }
            shape = .iso8601
        default: throw cursor.failure("expected ' ' or 'T' after the day")
        }
        let hour = try cursor.digits(bytes, 2, "hour")
        try cursor.expect(bytes, UInt8(ascii: ":"), "':' after the hour")
        let minute = try cursor.digits(bytes, 2, "minute")
        try cursor.expect(bytes, UInt8(ascii: ":"), "':' after the minute")
        let second = try cursor.digits(bytes, 2, "second")
        var millisecond: Int64 = 0
        var offsetMinutes: Int64 = 0
        switch shape {
        case .iso8601:
            if cursor.peek(bytes) == UInt8(ascii: ".") || cursor.peek(bytes) == UInt8(ascii: ",") {
                _ = cursor.next(bytes)
                var scale: Int64 = 100
                var count = 0
                while let byte = cursor.peek(bytes), byte.isASCIIDigit {
                    _ = cursor.next(bytes)
                    millisecond += Int64(byte - UInt8(ascii: "0")) * scale
                    scale /= 10
                    count += 1
                }
                guard (1...9).contains(count) else { throw cursor.failure("1 to 9 fraction digits") }
            }
            if cursor.peek(bytes) == UInt8(ascii: "Z") || cursor.peek(bytes) == UInt8(ascii: "z") {
                _ = cursor.next(bytes)
            } else {
                offsetMinutes = try cursor.offset(bytes, colon: .optional)
            }
        case .slashedGMTOffset:
            try cursor.expect(bytes, UInt8(ascii: " "), "' GMT' after the time")
            for letter in "GMT".utf8 { try cursor.expect(bytes, letter, "' GMT' after the time") }
            if !cursor.atEnd(bytes) {
                if cursor.peek(bytes) == UInt8(ascii: " ") { _ = cursor.next(bytes) }
                offsetMinutes = try cursor.offset(bytes, colon: .forbidden)
            }
        case .dashedOffset:
            try cursor.expect(bytes, UInt8(ascii: " "), "' ±hhmm' after the time")
            offsetMinutes = try cursor.offset(bytes, colon: .optional)
        case .epochMilliseconds:
            break
        }
        guard cursor.atEnd(bytes) else { throw cursor.failure("unexpected text after the date") }

        guard year >= 1 else { throw Failure(text: text, reason: "year 0000 does not exist") }
        guard (1...12).contains(month) else { throw Failure(text: text, reason: "month \(month) is out of range") }
        guard day >= 1, day <= CivilDate.daysInMonth(year: year, month: month) else {
            throw Failure(text: text, reason: "day \(day) does not exist in \(year)-\(month)")
        }
        guard hour <= 23 else { throw Failure(text: text, reason: "hour \(hour) is out of range") }
        guard minute <= 59 else { throw Failure(text: text, reason: "minute \(minute) is out of range") }
        guard second <= 59 else { throw Failure(text: text, reason: "second \(second) is out of range (no leap seconds)") }

        let days = CivilDate.toDays(year: year, month: month, day: day)
        let local = ((days * 24 + hour) * 60 + minute) * 60 + second
        let utcMilliseconds = (local - offsetMinutes * 60) * 1000 + millisecond
        guard let timestamp = TokenTimestamp(millisecondsSince1970: utcMilliseconds) else {
            throw Failure(text: text, reason: "outside years 0001…9999 once the offset is applied")
        }
        return (timestamp, shape)
    }

    /// `yyyy-MM-dd HH:mm:ss ±hhmm`, the way every media token's `issueTime`
    /// is written, read at its fixed positions: nil for anything else, a value
    /// out of range included, which the general reading below then reads (and
    /// words the error of). It reads what that reading reads, the same way
    /// (`DateAndTTLTests` holds the two to each other).
    private static func dashedOffsetAtFixedPositions(_ bytes: Span<UInt8>) -> TokenTimestamp? {
        guard bytes.count == 25, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: " "),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: " "),
            bytes[20] == UInt8(ascii: "+") || bytes[20] == UInt8(ascii: "-"),
            let year = fixedDigits(bytes, 0, 4), let month = fixedDigits(bytes, 5, 2), let day = fixedDigits(bytes, 8, 2),
            let hour = fixedDigits(bytes, 11, 2), let minute = fixedDigits(bytes, 14, 2), let second = fixedDigits(bytes, 17, 2),
            let offsetHours = fixedDigits(bytes, 21, 2), let offsetMinutes = fixedDigits(bytes, 23, 2),
            year >= 1, (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 59, offsetMinutes <= 59, offsetHours * 60 + offsetMinutes <= 14 * 60
        else { return nil }
        let offset = (offsetHours * 60 + offsetMinutes) * (bytes[20] == UInt8(ascii: "-") ? -1 : 1)
        let days = CivilDate.toDays(year: year, month: month, day: day)
        let local = ((days * 24 + hour) * 60 + minute) * 60 + second
        return TokenTimestamp(millisecondsSince1970: (local - offset * 60) * 1000)
    }

    /// The decimal value of `count` digits at `start`, or nil if one is not a digit.
    @inline(__always)
    private static func fixedDigits(_ bytes: Span<UInt8>, _ start: Int, _ count: Int) -> Int64? {
        var value: Int64 = 0
        for index in start..<(start + count) {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit <= 9 else { return nil }
            value = value * 10 + Int64(digit)
        }
        return value
    }

    private static func isAllDigits(_ bytes: Span<UInt8>) -> Bool {
        for index in bytes.indices where !bytes[index].isASCIIDigit { return false }
        return true
    }

    /// A position in the text, moved over the text's bytes, which each step is
    /// given (a `Span` cannot be stored in the cursor without lifetime
    /// annotations, which this toolchain keeps experimental).
    private struct Cursor {
        enum Colon { case optional, forbidden }
        let text: String
        var index = 0

        init(text: String) {
            self.text = text
        }

        func atEnd(_ bytes: Span<UInt8>) -> Bool { index >= bytes.count }
        func peek(_ bytes: Span<UInt8>) -> UInt8? { index < bytes.count ? bytes[index] : nil }
        mutating func next(_ bytes: Span<UInt8>) -> UInt8? {
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        @inline(never)
        func failure(_ expected: String) -> Failure {
            Failure(text: text, reason: "\(expected) (at character \(index + 1))")
        }

        // The messages of the steps below are put together out of line, only
        // when a step fails: built in the steps, their string interpolations
        // made every step (eight digit pairs per date) set up a large frame.

        @inline(never)
        func digitsFailure(_ count: Int, _ what: String) -> Failure {
            failure("\(count) digits for the \(what)")
        }

        @inline(never)
        func expectedFailure(_ expected: String) -> Failure {
            failure("expected \(expected)")
        }

        mutating func digits(_ bytes: Span<UInt8>, _ count: Int, _ what: String) throws(Failure) -> Int64 {
            var value: Int64 = 0
            for _ in 0..<count {
                guard let byte = peek(bytes), byte.isASCIIDigit else { throw digitsFailure(count, what) }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                index += 1
            }
            return value
        }

        mutating func expect(_ bytes: Span<UInt8>, _ byte: UInt8, _ expected: String) throws(Failure) {
            guard peek(bytes) == byte else { throw expectedFailure(expected) }
            index += 1
        }

        mutating func byte(_ bytes: Span<UInt8>, oneOf first: UInt8, _ second: UInt8, _ expected: String) throws(Failure) -> UInt8 {
            guard let byte = peek(bytes), byte == first || byte == second else { throw expectedFailure(expected) }
            index += 1
            return byte
        }

        /// `±hhmm` (or `±hh:mm` where allowed), at most 14:00 either way; returns minutes east of UTC.
        mutating func offset(_ bytes: Span<UInt8>, colon: Colon) throws(Failure) -> Int64 {
            guard let sign = peek(bytes), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else {
                throw failure("a zone offset '+hhmm' or '-hhmm'")
            }
            index += 1
            let hours = try digits(bytes, 2, "offset hours")
            if peek(bytes) == UInt8(ascii: ":") {
                guard colon == .optional else { throw failure("an offset written '+hhmm'") }
                index += 1
            }
            let minutes = try digits(bytes, 2, "offset minutes")
            guard minutes <= 59, hours * 60 + minutes <= 14 * 60 else {
                throw Failure(text: text, reason: "zone offset beyond ±14:00")
            }
            let total = hours * 60 + minutes
            return sign == UInt8(ascii: "-") ? -total : total
        }
    }
}
