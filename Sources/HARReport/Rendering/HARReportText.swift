import EntitlementTokens

/// The report for a terminal: the timeline, the chain, the findings. Every
/// string that came from the HAR goes through `TerminalText`'s escaping.
package struct HARReportText {
    package var report: HARReport
    package var source: String

    package init(report: HARReport, source: String) {
        self.report = report
        self.source = source
    }

    package var text: TerminalText {
        var out: TerminalText = "HAR \(source): \(report.timeline.count) entr\(report.timeline.count == 1 ? "y" : "ies")"
        if let first = report.firstTime { out += ", from \(first.iso8601)" }
        out += "\n\nTimeline (entries that carry, receive or are refused a credential, or got no answer)\n"
        var shown = 0
        for entry in report.timeline where !entry.credentials.isEmpty || entry.isRefused || entry.failedWithoutAnswer {
            shown += 1
            out += "  #\(entry.number)  \(offset(entry))  \(entry.method) \(entry.host)\(entry.path)  \(status(entry))\n"
            for credential in entry.credentials {
                out += "      \(credential.place.isSent ? "carries" : "receives") \(credential.kind.rawValue)"
                if !credential.fingerprint.isEmpty { out += " \(credential.fingerprint)" }
                out += " (\(credential.place.rawValue)\(credential.name.map { " \($0)" } ?? "")): \(credential.verdict.status)"
                if let expires = credential.expires { out += ", expires \(expires.iso8601)" }
                out += "\n        \(credential.verdict.reason)\n"
            }
        }
        if shown == 0 { out += "  (none)\n" }
        out += "\nChain\n"
        if report.chain.isEmpty { out += "  (no credential was handed out in the capture)\n" }
        for link in report.chain {
            out += "  "
            if let media = link.mediaToken { out += "media-token \(media) → " }
            out += "#\(link.issuedBy) issued \(link.kind.rawValue) \(link.fingerprint)"
            if let until = link.until { out += " (until \(until.iso8601))" }
            if link.covered.isEmpty {
                out += " → carried by no later request\n"
            } else {
                out += " → covered \(Self.numbers(link.covered)) (\(link.covered.count) request\(link.covered.count == 1 ? "" : "s")"
                out += link.refused.isEmpty ? ")\n" : "; refused: \(Self.numbers(link.refused)))\n"
            }
        }
        out += "\nFindings\n"
        if report.findings.isEmpty { out += "  none: every request that carried a credential was answered\n" }
        for (index, finding) in report.findings.enumerated() {
            out += "  \(index + 1). \(finding.kind)"
            if !finding.entries.isEmpty { out += " (\(Self.numbers(finding.entries)))" }
            out += "\(finding.isFailure ? "" : " [note]"): \(finding.message)\n"
        }
        return out
    }

    private func offset(_ entry: HARTimelineEntry) -> TerminalText {
        guard let started = entry.started, let first = report.firstTime else { return "(no time)" }
        let milliseconds = started.millisecondsSince1970 - first.millisecondsSince1970
        let fraction = String(1000 + milliseconds % 1000).dropFirst()
        return "+\(milliseconds / 1000).\(fraction)s"
    }

    private func status(_ entry: HARTimelineEntry) -> TerminalText {
        if let error = entry.error { return "failed: \(error)" }
        return entry.status == 0 ? "no answer (status 0)" : "\(entry.status)"
    }

    /// `#3, #4, #7`; a long list is shortened to its first and last ones.
    static func numbers(_ numbers: [Int]) -> TerminalText {
        let shown = numbers.count > 12 ? Array(numbers.prefix(10)) : numbers
        var text = TerminalText(escaping: shown.map { "#\($0)" }.joined(separator: ", "))
        if numbers.count > 12 { text += " … #\(numbers[numbers.count - 1])" }
        return text
    }
}
