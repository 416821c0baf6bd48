/// One check of docs/DESIGN.md#statuses, as a small value the verifier composes (docs/DESIGN.md#the-librarys-habits).
protocol TokenPolicy: Sendable {
    var check: VerificationCheck { get }
    func evaluate(_ token: DecodedToken, now: TokenTimestamp) -> PolicyResult
}

enum PolicyResult: Sendable {
    case pass
    case fail(VerificationStatus, String)
    /// The check does not apply to this token (e.g. issue time on an authN token).
    case skip(String)
}

/// Formats a span of time the way a person says it: "3 h 12 min", "4 min 10 s",
/// "41 s", "250 ms", "2 d 5 h", "3 y 40 d". The sign is dropped.
package enum DurationText {
    package static func describe(milliseconds: Int64) -> String {
        let value = milliseconds.magnitude
        if value < 1000 { return "\(value) ms" }
        let seconds = value / 1000
        if seconds < 60 { return "\(seconds) s" }
        let minutes = seconds / 60
        if minutes < 60 { return seconds % 60 == 0 ? "\(minutes) min" : "\(minutes) min \(seconds % 60) s" }
        let hours = minutes / 60
        if hours < 48 { return minutes % 60 == 0 ? "\(hours) h" : "\(hours) h \(minutes % 60) min" }
        let days = hours / 24
        if days < 730 { return "\(days) d \(hours % 24) h" }
        return "\(days / 365) y \(days % 365) d"
    }
}
