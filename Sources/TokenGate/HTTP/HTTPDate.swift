import EntitlementTokens
import Synchronization

/// The `Date` field (RFC 9110 §6.6.1, IMF-fixdate: `Sat, 28 Nov 2026 04:30:00 GMT`)
/// of the answers ``DirectAnswerHandler`` writes, as the framework dates its
/// own: the text is made once a second and shared by every event loop.
final class HTTPDate: Sendable {
    private let made = Mutex<(second: Int64, text: String)>((.min, ""))

    /// The text for `instant`, to the second.
    func text(at instant: TokenTimestamp) -> String {
        let second =
            instant.millisecondsSince1970 >= 0
            ? instant.millisecondsSince1970 / 1000
            : (instant.millisecondsSince1970 - 999) / 1000
        return made.withLock { made in
            if made.second != second { made = (second, Self.format(second: second)) }
            return made.text
        }
    }

    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(second: Int64) -> String {
        let days = second >= 0 ? second / 86_400 : (second - 86_399) / 86_400
        let secondOfDay = second - days * 86_400
        let (year, month, day) = CivilDate.fromDays(days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        return "\(weekday), \(two(day)) \(months[Int(month - 1)]) \(year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }
}
