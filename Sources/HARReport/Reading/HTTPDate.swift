import EntitlementTokens

/// Reads the dates of HTTP fields: a `Date` header (RFC 9110 §5.6.7,
/// `Sun, 29 Nov 2026 17:00:00 GMT`) and a cookie's `Expires` (RFC 6265 §5.1.1,
/// which also takes `29-Nov-2026` and two-digit years). Lenient as RFC 6265's
/// algorithm is, since browsers are: the parts are found by their shape.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func parse(_ text: String) -> TokenTimestamp? {
        guard text.utf8.count <= 64 else { return nil }
        var day: Int64?
        var month: Int64?
        var year: Int64?
        var time: (Int64, Int64, Int64)?
        let parts = text.split { $0 == " " || $0 == "," || $0 == "-" || $0 == "\t" }
        for part in parts {
            if time == nil, part.contains(":") {
                let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
                guard pieces.count == 3, let h = Int64(pieces[0]), let m = Int64(pieces[1]), let s = Int64(pieces[2]),
                    (0...23).contains(h), (0...59).contains(m), (0...60).contains(s)
                else { return nil }
                time = (h, m, s)
            } else if month == nil, let index = months.firstIndex(of: String(part.prefix(3)).lowercased()), part.count >= 3 {
                month = Int64(index + 1)
            } else if let number = Int64(part), part.allSatisfy(\.isASCII) {
                if day == nil, part.count <= 2 {
                    day = number
                } else if year == nil, part.count == 2 || part.count == 4 {
                    year = part.count == 2 ? (number < 70 ? 2000 + number : 1900 + number) : number
                }
            }
        }
        guard let day, let month, let year, let time, (1...CivilDate.daysInMonth(year: year, month: month)).contains(day),
            (1601...9999).contains(year)
        else { return nil }
        let days = CivilDate.toDays(year: year, month: month, day: day)
        let seconds = days * 86_400 + time.0 * 3600 + time.1 * 60 + time.2
        return TokenTimestamp(millisecondsSince1970: seconds * 1000)
    }
}
