import CDNTokens
import EntitlementTokens

/// A CDN token's report for people (docs/DESIGN.md#text-for-people): the
/// status first, the kind and the carrier, the reason, the URL it was
/// checked against, the times absolute and relative, then every field
/// aligned (a CAT also in diagnostic notation). Every string from the paste
/// is escaped on its way in, so a forged field cannot draw a status line.
struct CDNReportText {
    var report: CDNReadingReport
    var style: TextStyle
    var now: TokenTimestamp
    /// `inspect`: the reason even when the token is valid.
    var detailed: Bool

    var text: TerminalText {
        var lines: [TerminalText] = []
        let status = report.status.map { Self.status($0, style: style) } ?? style.yellow("DECODED (not verified)")
        var heading: TerminalText = "#\(report.input) \(status)"
        if let reading = report.reading {
            heading += "  \(reading.kind.rawValue) in \(reading.carrier.phrase)"
            if let name = reading.tokenName { heading += " (\(name))" }
        }
        heading += style.dim("  \(report.source):\(report.line)")
        lines.append(heading)
        if report.status != .validToken || detailed {
            lines.append("   \(report.reason)")
        }
        guard let reading = report.reading else { return TerminalText.joined(lines, separator: "\n") + "\n" }
        var rows: [(String, TerminalText)] = []
        rows.append(("url", report.url.map { "\($0.description)" } ?? "none given: the scope is not checked"))
        if let start = reading.notBefore { rows.append(("starts", time(start))) }
        if let expires = reading.expires { rows.append(("expires", time(expires))) }
        if case .cat(let cat) = reading.token, let renewal = cat.token.renewal {
            rows.append(("renewal", renewalText(renewal, window: cat.token.renewalWindow)))
        }
        if let verifiedWith = report.verifiedWith { rows.append(("keys", "\(verifiedWith)")) }
        lines += Self.aligned(rows, indent: "   ")
        lines.append("   " + style.bold("fields"))
        var fields = reading.fields.map { ($0.name, TerminalText("\($0.value)")) }
        fields += reading.cookieAttributes.map { ("\($0.name) attributes", TerminalText("\($0.value)")) }
        lines += Self.aligned(fields, indent: "     ")
        if let diagnostic = reading.diagnostic {
            lines.append("   " + style.bold("diagnostic notation"))
            lines.append("     \(diagnostic)")
        }
        return TerminalText.joined(lines, separator: "\n") + "\n"
    }

    /// A status name, green when valid and red otherwise.
    static func status(_ status: CDNStatus, style: TextStyle) -> TerminalText {
        let name = TerminalText(stringLiteral: status.rawValue)
        return status == .validToken ? style.green(name) : style.red(name)
    }

    /// `1767225600 = 2026-01-01T00:00:00Z  (in 10 min)`.
    private func time(_ seconds: Int64) -> TerminalText {
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow, let timestamp = TokenTimestamp(millisecondsSince1970: milliseconds) else { return "\(seconds)" }
        let delta = milliseconds - now.millisecondsSince1970
        let relative = delta > 0 ? "in \(DurationText.describe(milliseconds: delta))" : "\(DurationText.describe(milliseconds: -delta)) ago"
        return "\(seconds) = \(timestamp.iso8601)  (\(relative))"
    }

    /// `catr` in words, and where `--now` stands against its window
    /// (`exp − deadline ≤ now < exp`, docs/CDN.md#renewal-catr).
    private func renewalText(_ renewal: CATRenewal, window: Range<Int64>?) -> TerminalText {
        var words = "catr \(renewal.type.name), expadd \(renewal.expAdd) s, deadline \(renewal.deadline) s"
        if let name = renewal.cookieName { words += ", cookie \(name)" }
        if let name = renewal.headerName { words += ", header \(name)" }
        var text = TerminalText(escaping: words) + "; "
        let milliseconds = now.millisecondsSince1970
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        guard let window else { return text + "no exp: never due for renewal" }
        if window.contains(seconds) {
            text += style.green("within its renewal window at now") + " (\(window.lowerBound) <= now < \(window.upperBound))"
        } else if seconds < window.lowerBound {
            text += "not yet due: the window opens at " + time(window.lowerBound)
        } else {
            text += style.yellow("past its window: expired, too late to renew")
        }
        return text
    }

    /// Names escaped and padded to one column, values as given.
    private static func aligned(_ rows: [(String, TerminalText)], indent: String) -> [TerminalText] {
        let names = rows.map { TerminalText(escaping: $0.0) }
        let width = names.map(\.rendered.count).max() ?? 0
        return zip(names, rows).map { name, row in
            TerminalText(stringLiteral: indent) + name + TerminalText(stringLiteral: String(repeating: " ", count: width - name.rendered.count + 2))
                + row.1
        }
    }
}
