import EntitlementTokens

/// The report as one self-contained HTML page, to attach to a ticket
/// (docs/HAR.md#the-html-report): the timeline drawn as inline SVG (each
/// credential's lifetime a bar, each request a tick coloured by its status),
/// the findings linked to their entries (`#entry-N`), the chain, and the
/// entries with their credentials, URLs with every credential replaced as in
/// the text report.
///
/// Nothing is fetched: no script, no link, no image, no font; the one style
/// block is inline and the page's Content-Security-Policy
/// (``contentSecurityPolicy``) allows that block by its SHA-256 and nothing
/// else, so a string of the HAR that escaped its escaping could still neither
/// run nor style nor load anything. Every string from the HAR goes through
/// ``MarkupText/forPage(_:)``, in text and in attributes alike.
///
/// Bounded: the page is linear in the entries. At most ``maximumTicks``
/// requests are drawn as ticks and ``maximumBars`` credentials as bars, and
/// the page says how many were left out; the entry table lists the entries
/// the text report lists, plus every entry a finding or the chain names, so
/// each link has its anchor.
package struct HARReportHTML {
    package var report: HARReport
    package var source: String

    /// Most requests drawn as ticks (the table still lists every entry it lists).
    package static let maximumTicks = 5000
    /// Most credentials drawn as lifetime bars.
    package static let maximumBars = 200
    /// Longest text of a tick's or a bar's tooltip, in characters (a URL may be 64 KiB).
    static let maximumTooltipCharacters = 300

    package init(report: HARReport, source: String) {
        self.report = report
        self.source = source
    }

    // MARK: Style and policy

    /// The page's one style block, exactly as written between `<style>` and `</style>`
    /// (the policy's hash is over these bytes). No `<` or `&` in it, so the page is XML too.
    package static let style = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#1b1b1b;background:#fff}\
        h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.15em;margin:1.6em 0 .5em;border-bottom:1px solid #ddd}\
        .meta{color:#555}.broke{color:#b71c1c;font-weight:600}.played{color:#1b5e20;font-weight:600}\
        code,.mono{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;font-size:.92em}\
        svg{display:block;max-width:100%;height:auto;border:1px solid #ddd;background:#fafafa}\
        .legend span{display:inline-block;margin-right:1.2em}.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:middle}\
        .s-ok{background:#2e7d32}.s-refused{background:#ef6c00}.s-error{background:#c62828}.s-failed{background:#424242}.s-other{background:#9e9e9e}\
        table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #e4e4e4;padding:.3em .5em;text-align:left;vertical-align:top}\
        th{background:#f3f3f3}td.url{word-break:break-all}tr:target,li:target{background:#fff6d5}\
        .failure{color:#b71c1c}.note{color:#555}ul.creds{margin:0;padding-left:1.1em}.reason{color:#555}\
        ol.findings li{margin-bottom:.5em}.kind{font-weight:600}
        """

    /// `sha256-…` of ``style``: what the policy allows.
    package static let styleHash = "sha256-" + Base64.encode(SHA256Hasher.hash(Array(style.utf8)).bytes)

    /// Nothing by default; the one style block by its hash. No `'unsafe-inline'`:
    /// an injected `<style>` or `style=` attribute would not apply. No script at all.
    /// (`frame-ancestors` and `report-uri` are ignored in a `<meta>`, so not given.)
    package static let contentSecurityPolicy = "default-src 'none'; style-src '\(styleHash)'; img-src 'none'; base-uri 'none'; form-action 'none'"

    // MARK: Colours

    /// A tick's colour, by the answer: 2xx and 3xx answered, 4xx refused, 5xx a
    /// server's error, 0 or `_error` no answer at all.
    package static func colour(status: Int, failed: Bool) -> String {
        if failed || status == 0 { return "#424242" }
        switch status / 100 {
        case 2, 3: return "#2e7d32"
        case 4: return "#ef6c00"
        case 5: return "#c62828"
        default: return "#9e9e9e"
        }
    }

    /// The legend's class for the same colour.
    static func statusClass(status: Int, failed: Bool) -> String {
        if failed || status == 0 { return "s-failed" }
        switch status / 100 {
        case 2, 3: return "s-ok"
        case 4: return "s-refused"
        case 5: return "s-error"
        default: return "s-other"
        }
    }

    static func colour(verdict: HARVerdict) -> String {
        if verdict.isFailure { return "#c62828" }
        return verdict.status == HARVerdict.notChecked ? "#1565c0" : "#2e7d32"
    }

    // MARK: The page

    package var bytes: [UInt8] { Array(html.utf8) }

    package var html: String {
        let shown = shownEntries()
        var out = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8" />
            <meta http-equiv="Content-Security-Policy" content="\(Self.contentSecurityPolicy)" />
            <meta name="referrer" content="no-referrer" />
            <title>HAR report: \(h(source))</title>
            <style>\(Self.style)</style>
            </head>
            <body>

            """
        out += "<h1>HAR report: <span class=\"mono\">\(h(source))</span></h1>\n"
        out += "<p class=\"meta\">\(report.timeline.count) entr\(report.timeline.count == 1 ? "y" : "ies")"
        if let first = report.firstTime { out += ", from \(h(first.iso8601))" }
        out += ". "
        let failures = report.findings.filter(\.isFailure).count
        out +=
            failures == 0
            ? "<span class=\"played\">No finding names a failure.</span></p>\n"
            : "<span class=\"broke\">\(failures) finding\(failures == 1 ? " names" : "s name") a failure.</span></p>\n"
        out += findings(shown)
        out += timeline(shown)
        out += chain(shown)
        out += table(shown)
        out += "</body>\n</html>\n"
        return out
    }

    /// Input-derived text, escaped for text and attributes alike.
    private func h(_ text: some StringProtocol) -> String { MarkupText.forPage(text) }

    /// The entries the table lists: those the text report lists, and every one a finding or the chain names.
    private func shownEntries() -> Set<Int> {
        var shown = Set(
            report.timeline.filter { !$0.credentials.isEmpty || $0.isRefused || $0.failedWithoutAnswer }.map(\.number)
        )
        for finding in report.findings { shown.formUnion(finding.entries) }
        for link in report.chain { shown.insert(link.issuedBy) }
        return shown
    }

    /// `#n` linked to its row when the table lists it.
    private func link(_ number: Int, _ shown: Set<Int>) -> String {
        shown.contains(number) ? "<a href=\"#entry-\(number)\">#\(number)</a>" : "#\(number)"
    }

    /// `#3, #4, #7` linked; a long list shortened to its first ten and its last, as the text report does.
    private func links(_ numbers: [Int], _ shown: Set<Int>) -> String {
        let listed = numbers.count > 12 ? Array(numbers.prefix(10)) : numbers
        var out = listed.map { link($0, shown) }.joined(separator: ", ")
        if numbers.count > 12, let last = numbers.last { out += " … " + link(last, shown) }
        return out
    }

    private func offset(_ time: TokenTimestamp?) -> String {
        guard let time, let first = report.firstTime else { return "(no time)" }
        let milliseconds = time.millisecondsSince1970 - first.millisecondsSince1970
        let sign = milliseconds < 0 ? "-" : "+"
        let magnitude = milliseconds.magnitude
        return "\(sign)\(magnitude / 1000).\(String(1000 + magnitude % 1000).dropFirst())s"
    }

    static func tooltip(_ text: String) -> String {
        text.count > maximumTooltipCharacters ? String(text.prefix(maximumTooltipCharacters)) + "…" : text
    }

    // MARK: Findings

    private func findings(_ shown: Set<Int>) -> String {
        var out = "<h2 id=\"findings\">Findings</h2>\n"
        guard !report.findings.isEmpty else {
            return out + "<p>None: every request that carried a credential was answered.</p>\n"
        }
        out += "<ol class=\"findings\">\n"
        for (index, finding) in report.findings.enumerated() {
            out +=
                "<li id=\"finding-\(index + 1)\" class=\"\(finding.isFailure ? "failure" : "note")\"><span class=\"kind\">\(h(finding.kind))</span>"
            if !finding.entries.isEmpty { out += " (\(links(finding.entries, shown)))" }
            if !finding.isFailure { out += " [note]" }
            out += ": \(h(finding.message))</li>\n"
        }
        return out + "</ol>\n"
    }

    // MARK: The timeline

    /// One credential's bar: from where it was first seen to when it stops being valid.
    private struct Bar {
        var kind: HARCredentialKind
        var fingerprint: String
        var firstEntry: Int
        var start: TokenTimestamp
        var end: TokenTimestamp?
        var verdict: HARVerdict
    }

    private func lifetimeBars() -> (bars: [Bar], total: Int) {
        var index: [String: Int] = [:]
        var bars: [Bar] = []
        var total = 0
        // A link's `until` already takes a cookie's lifetime into account.
        let until = Dictionary(report.chain.map { ($0.fingerprint, $0.until) }, uniquingKeysWith: { first, _ in first })
        for entry in report.timeline {
            guard let started = entry.started else { continue }
            for credential in entry.credentials where credential.kind != .tokenStatus && !credential.fingerprint.isEmpty {
                if let at = index[credential.fingerprint] {
                    // The worst verdict it had wins the colour.
                    if credential.verdict.isFailure, !bars[at].verdict.isFailure { bars[at].verdict = credential.verdict }
                    continue
                }
                total += 1
                guard bars.count < Self.maximumBars else { continue }
                index[credential.fingerprint] = bars.count
                bars.append(
                    Bar(
                        kind: credential.kind,
                        fingerprint: credential.fingerprint,
                        firstEntry: entry.number,
                        start: started,
                        end: (until[credential.fingerprint] ?? nil) ?? credential.expires,
                        verdict: credential.verdict
                    )
                )
            }
        }
        return (bars, total)
    }

    private func timeline(_ shown: Set<Int>) -> String {
        var out = "<h2 id=\"timeline\">Timeline</h2>\n"
        let timed = report.timeline.filter { $0.started != nil }
        guard let first = report.firstTime, let last = timed.last?.started else {
            return out + "<p>No entry has a time the report could read: nothing to draw.</p>\n"
        }
        let (bars, totalBars) = lifetimeBars()
        // The drawing spans the requests, and the credentials' lifetimes up to a
        // quarter of that further (at least a minute): a cookie valid for hours
        // would otherwise squeeze every request into one pixel.
        let span = max(last.millisecondsSince1970 - first.millisecondsSince1970, 1)
        let reach = last.millisecondsSince1970 + max(span / 4, 60_000)
        let latestEnd = bars.compactMap { $0.end?.millisecondsSince1970 }.max() ?? last.millisecondsSince1970
        let end = max(last.millisecondsSince1970, min(latestEnd, reach))
        let domain = Double(max(end - first.millisecondsSince1970, 1))
        let labelWidth = 230
        let plotWidth = 900
        let width = labelWidth + plotWidth + 20
        func x(_ milliseconds: Int64) -> Int {
            let clamped = min(max(milliseconds, first.millisecondsSince1970), end)
            return labelWidth + Int((Double(clamped - first.millisecondsSince1970) / domain * Double(plotWidth)).rounded())
        }
        let tickTop = 34
        let tickHeight = 26
        let barTop = tickTop + tickHeight + 22
        let rowHeight = 18
        let height = barTop + max(bars.count, 1) * rowHeight + 16

        out += """
            <p class="legend"><span><span class="swatch s-ok"></span>2xx, 3xx</span>\
            <span><span class="swatch s-refused"></span>4xx</span><span><span class="swatch s-error"></span>5xx</span>\
            <span><span class="swatch s-failed"></span>no answer (status 0)</span><span><span class="swatch s-other"></span>other</span>\
            Bars: each credential from where it was first seen to its expiry (green valid, red a failure, blue not checked: no key; \
            dashed grey: no expiry known).</p>

            """
        out +=
            "<svg role=\"img\" aria-label=\"Timeline of the capture\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\">\n"
        // The axis: five grid lines with their offsets.
        for step in 0...4 {
            let at = first.millisecondsSince1970 + Int64(Double(end - first.millisecondsSince1970) * Double(step) / 4)
            let position = x(at)
            out += "<line x1=\"\(position)\" y1=\"\(tickTop - 6)\" x2=\"\(position)\" y2=\"\(height - 8)\" stroke=\"#e0e0e0\"/>"
            let anchor = step == 0 ? "start" : (step == 4 ? "end" : "middle")
            out +=
                "<text x=\"\(position)\" y=\"16\" font-size=\"11\" text-anchor=\"\(anchor)\" fill=\"#555\">\(h(offset(TokenTimestamp(millisecondsSince1970: at))))</text>\n"
        }
        out += "<text x=\"4\" y=\"\(tickTop + 17)\" font-size=\"12\" fill=\"#333\">requests</text>\n"
        // The requests: one tick each, coloured by the answer.
        for entry in timed.prefix(Self.maximumTicks) {
            guard let started = entry.started else { continue }
            let colour = Self.colour(status: entry.status, failed: entry.failedWithoutAnswer)
            let what = Self.tooltip(
                "#\(entry.number) \(offset(started)) \(entry.method) \(entry.host)\(entry.path) \(entry.error.map { "failed: \($0)" } ?? String(entry.status))"
            )
            let tick =
                "<rect class=\"tick\" data-entry=\"\(entry.number)\" data-status=\"\(entry.status)\" x=\"\(x(started.millisecondsSince1970) - 1)\" y=\"\(tickTop)\" width=\"2\" height=\"\(tickHeight)\" fill=\"\(colour)\"><title>\(h(what))</title></rect>"
            out += shown.contains(entry.number) ? "<a href=\"#entry-\(entry.number)\">\(tick)</a>\n" : tick + "\n"
        }
        // The credentials: one bar each.
        if bars.isEmpty {
            out += "<text x=\"4\" y=\"\(barTop + 13)\" font-size=\"12\" fill=\"#555\">no credential in the capture</text>\n"
        }
        for (row, bar) in bars.enumerated() {
            let y = barTop + row * rowHeight
            let start = x(bar.start.millisecondsSince1970)
            let stop = bar.end.map { x($0.millisecondsSince1970) } ?? x(end)
            // No expiry known: grey, dashed, to the end of the drawing.
            let paint =
                bar.end == nil ? "fill=\"#bdbdbd\" stroke=\"#757575\" stroke-dasharray=\"4 3\"" : "fill=\"\(Self.colour(verdict: bar.verdict))\""
            var what = "\(bar.kind.rawValue) \(bar.fingerprint), first seen in #\(bar.firstEntry) at \(bar.start.iso8601)"
            if let barEnd = bar.end {
                what += barEnd < bar.start ? ", already expired at \(barEnd.iso8601)" : ", valid until \(barEnd.iso8601)"
                if barEnd.millisecondsSince1970 > end { what += " (beyond the drawing)" }
            } else {
                what += ", no expiry known"
            }
            what += ": \(bar.verdict.status)"
            out += "<text x=\"4\" y=\"\(y + 12)\" font-size=\"11\" fill=\"#333\">\(h(Self.tooltip("\(bar.kind.rawValue) \(bar.fingerprint)")))</text>"
            let rect =
                "<rect class=\"bar\" x=\"\(start)\" y=\"\(y + 2)\" width=\"\(max(stop - start, 3))\" height=\"\(rowHeight - 5)\" \(paint)><title>\(h(Self.tooltip(what)))</title></rect>"
            out += shown.contains(bar.firstEntry) ? "<a href=\"#entry-\(bar.firstEntry)\">\(rect)</a>\n" : rect + "\n"
        }
        out += "</svg>\n"
        var notes: [String] = []
        if timed.count > Self.maximumTicks {
            notes.append("The first \(Self.maximumTicks) of \(timed.count) requests are drawn; the table below lists the rest that matter.")
        }
        if totalBars > bars.count { notes.append("The first \(bars.count) of \(totalBars) credentials are drawn as bars.") }
        if timed.count < report.timeline.count {
            notes.append(
                "\(report.timeline.count - timed.count) entr\(report.timeline.count - timed.count == 1 ? "y has" : "ies have") no readable time and \(report.timeline.count - timed.count == 1 ? "is" : "are") not drawn."
            )
        }
        if !notes.isEmpty { out += "<p class=\"note\">\(notes.joined(separator: " "))</p>\n" }
        return out
    }

    // MARK: The chain

    private func chain(_ shown: Set<Int>) -> String {
        var out = "<h2 id=\"chain\">Chain</h2>\n"
        guard !report.chain.isEmpty else { return out + "<p>No credential was handed out in the capture.</p>\n" }
        out += "<ul>\n"
        for link in report.chain {
            out += "<li>"
            if let media = link.mediaToken { out += "media-token <code>\(h(media))</code> → " }
            out += "\(self.link(link.issuedBy, shown)) issued \(h(link.kind.rawValue)) <code>\(h(link.fingerprint))</code>"
            if let until = link.until { out += " (until \(h(until.iso8601)))" }
            if link.covered.isEmpty {
                out += " → carried by no later request"
            } else {
                out += " → covered \(links(link.covered, shown)) (\(link.covered.count) request\(link.covered.count == 1 ? "" : "s")"
                out += link.refused.isEmpty ? ")" : "; refused: \(links(link.refused, shown)))"
            }
            out += "</li>\n"
        }
        return out + "</ul>\n"
    }

    // MARK: The entries

    private func table(_ shown: Set<Int>) -> String {
        var out = "<h2 id=\"entries\">Entries</h2>\n"
        let rows = report.timeline.filter { shown.contains($0.number) }
        let left = report.timeline.count - rows.count
        out += "<p class=\"meta\">In the order the requests started, numbered as in the file. "
        out += "Entries that carry, receive or are refused a credential, got no answer, or that a finding names"
        out += left > 0 ? "; \(left) other\(left == 1 ? "" : "s") (answered, carrying nothing) only as ticks.</p>\n" : ".</p>\n"
        guard !rows.isEmpty else { return out + "<p>(none)</p>\n" }
        out += "<table>\n<thead><tr><th>#</th><th>Time</th><th>Request</th><th>Status</th><th>Credentials</th></tr></thead>\n<tbody>\n"
        for entry in rows {
            let status =
                entry.error.map { "failed: \(h($0))" } ?? (entry.status == 0 ? "no answer (status 0)" : String(entry.status))
            out += "<tr id=\"entry-\(entry.number)\"><td>#\(entry.number)</td><td class=\"mono\">\(h(offset(entry.started)))</td>"
            // The whole URL (credentials replaced) as the cell's tooltip: the cell shows host and path.
            out += "<td class=\"url mono\" title=\"\(h(Self.tooltip(entry.url)))\">\(h(entry.method)) \(h(entry.host))\(h(entry.path))</td>"
            out += "<td><span class=\"swatch \(Self.statusClass(status: entry.status, failed: entry.failedWithoutAnswer))\"></span>\(status)</td><td>"
            if !entry.credentials.isEmpty {
                out += "<ul class=\"creds\">"
                for credential in entry.credentials {
                    out += "<li>\(credential.place.isSent ? "carries" : "receives") <span class=\"kind\">\(h(credential.kind.rawValue))</span>"
                    if !credential.fingerprint.isEmpty { out += " <code>\(h(credential.fingerprint))</code>" }
                    out += " (\(h(credential.place.rawValue))\(credential.name.map { " " + h($0) } ?? "")): "
                    out += "<span class=\"\(credential.verdict.isFailure ? "failure" : "verdict")\">\(h(credential.verdict.status))</span>"
                    if let expires = credential.expires { out += ", expires \(h(expires.iso8601))" }
                    out += "<br /><span class=\"reason\">\(h(credential.verdict.reason))</span></li>"
                }
                out += "</ul>"
            }
            out += "</td></tr>\n"
        }
        return out + "</tbody>\n</table>\n"
    }
}
