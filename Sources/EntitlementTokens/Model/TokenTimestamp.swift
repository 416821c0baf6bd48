/// An instant, in milliseconds since 1970-01-01T00:00:00Z, as tokens carry them.
///
/// Integer milliseconds rather than `Date`: token arithmetic (`issueTime + ttl`)
/// must be exact and overflow-checked, and the range is limited to years
/// 0001…9999 so every instant can be written back as ISO 8601.
public struct TokenTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var millisecondsSince1970: Int64

    /// 0001-01-01T00:00:00.000Z
    public static let earliest = TokenTimestamp(uncheckedMilliseconds: -62_135_596_800_000)
    /// 9999-12-31T23:59:59.999Z
    public static let latest = TokenTimestamp(uncheckedMilliseconds: 253_402_300_799_999)

    init(uncheckedMilliseconds: Int64) {
        millisecondsSince1970 = uncheckedMilliseconds
    }

    /// Nil when outside years 0001…9999.
    public init?(millisecondsSince1970: Int64) {
        guard millisecondsSince1970 >= Self.earliest.millisecondsSince1970,
            millisecondsSince1970 <= Self.latest.millisecondsSince1970
        else { return nil }
        self.millisecondsSince1970 = millisecondsSince1970
    }

    /// Earlier instants order first.
    public static func < (lhs: TokenTimestamp, rhs: TokenTimestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    /// `self + milliseconds`, or nil when that overflows or leaves the supported range.
    public func adding(milliseconds: Int64) -> TokenTimestamp? {
        let (sum, overflow) = millisecondsSince1970.addingReportingOverflow(milliseconds)
        return overflow ? nil : TokenTimestamp(millisecondsSince1970: sum)
    }

    /// ISO 8601 in UTC with `Z`; milliseconds only when not zero.
    public var iso8601: String {
        withISO8601 { $0.decodedAsUTF8 }
    }

    /// `body` with the ``iso8601`` text as UTF-8, made without a `String`
    /// (the JSON report writes two per token).
    func withISO8601<R>(_ body: (Span<UInt8>) -> R) -> R {
        let (days, millisecondOfDay) = Self.floorDivide(millisecondsSince1970, 86_400_000)
        let (year, month, day) = CivilDate.fromDays(days)
        let seconds = millisecondOfDay / 1000
        let milliseconds = millisecondOfDay % 1000
        if (0...9999).contains(year) {
            // Written byte by byte: string interpolation of padded parts costs several allocations.
            var buffer = InlineArray<24, UInt8>(repeating: 0)
            var count = 0
            func put(_ value: Int64, _ width: Int) {
                var value = value
                for index in stride(from: count + width - 1, through: count, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                count += width
            }
            func put(_ byte: UInt8) {
                buffer[count] = byte
                count += 1
            }
            put(year, 4)
            put(UInt8(ascii: "-"))
            put(month, 2)
            put(UInt8(ascii: "-"))
            put(day, 2)
            put(UInt8(ascii: "T"))
            put(seconds / 3600, 2)
            put(UInt8(ascii: ":"))
            put(seconds / 60 % 60, 2)
            put(UInt8(ascii: ":"))
            put(seconds % 60, 2)
            if milliseconds != 0 {
                put(UInt8(ascii: "."))
                put(milliseconds, 3)
            }
            put(UInt8(ascii: "Z"))
            return body(buffer.span.extracting(0..<count))
        }
        var text = "\(Self.pad(year, 4))-\(Self.pad(month, 2))-\(Self.pad(day, 2))T"
        text += "\(Self.pad(seconds / 3600, 2)):\(Self.pad(seconds / 60 % 60, 2)):\(Self.pad(seconds % 60, 2))"
        if milliseconds != 0 { text += ".\(Self.pad(milliseconds, 3))" }
        text += "Z"
        return body(text.utf8.span)
    }

    public var description: String { iso8601 }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        var quotient = value / divisor
        var remainder = value % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

/// Proleptic Gregorian calendar arithmetic (H. Hinnant's days-from-civil), so
/// dates convert exactly and fast without Foundation's calendars.
package enum CivilDate {
    package static func toDays(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    package static func fromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    package static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

extension TokenTimestamp {
    /// Writes the instant in one of the token date shapes, at a UTC offset
    /// (minutes east; ignored for ISO 8601, which is written with `Z`, and epoch).
    public func formatted(_ shape: TokenDateParser.Shape, offsetMinutes: Int64 = 0) -> String {
        switch shape {
        case .iso8601: return iso8601
        case .epochMilliseconds: return String(millisecondsSince1970)
        case .slashedGMTOffset, .dashedOffset: break
        }
        let local = millisecondsSince1970 + offsetMinutes * 60_000
        let (days, millisecondOfDay) = Self.floorDivide(local, 86_400_000)
        let (year, month, day) = CivilDate.fromDays(days)
        let seconds = millisecondOfDay / 1000
        let pad = Self.pad
        let separator = shape == .slashedGMTOffset ? "/" : "-"
        let date = "\(pad(year, 4))\(separator)\(pad(month, 2))\(separator)\(pad(day, 2))"
        let time = "\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2))"
        let offsetMagnitude = Int64(offsetMinutes.magnitude)
        let offset = "\(offsetMinutes < 0 ? "-" : "+")\(pad(offsetMagnitude / 60, 2))\(pad(offsetMagnitude % 60, 2))"
        return shape == .slashedGMTOffset ? "\(date) \(time) GMT \(offset)" : "\(date) \(time) \(offset)"
    }
}
