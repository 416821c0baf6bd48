/// How a report is shown to people: colour or not, the time it is read
/// against, and how much detail.
public struct TextReportOptions: Sendable {
    /// Colours, or none.
    public var style: TextStyle
    /// Times are shown absolute and relative to this ("expired 3 h ago").
    public var now: TokenTimestamp
    /// Every field, the signature, the transport, the checks (`inspect`).
    public var detailed: Bool
    /// Quote the signed bytes under each token.
    public var showSignedBytes: Bool

    /// Options; `now` is what relative times are measured from.
    public init(
        style: TextStyle = TextStyle(colored: false),
        now: TokenTimestamp,
        detailed: Bool = false,
        showSignedBytes: Bool = false
    ) {
        self.style = style
        self.now = now
        self.detailed = detailed
        self.showSignedBytes = showSignedBytes
    }
}

/// ANSI styles, or nothing when colour is off.
public struct TextStyle: Sendable {
    /// Whether ANSI styles are written.
    public let colored: Bool

    /// A style with or without colour.
    public init(colored: Bool) { self.colored = colored }

    /// `text` in bold green.
    public func green(_ text: TerminalText) -> TerminalText { wrap(text, "32;1") }
    /// `text` in bold red.
    public func red(_ text: TerminalText) -> TerminalText { wrap(text, "31;1") }
    /// `text` in bold yellow.
    public func yellow(_ text: TerminalText) -> TerminalText { wrap(text, "33;1") }
    /// `text` dimmed.
    public func dim(_ text: TerminalText) -> TerminalText { wrap(text, "2") }
    /// `text` in bold.
    public func bold(_ text: TerminalText) -> TerminalText { wrap(text, "1") }

    /// A status name, green when valid and red otherwise.
    public func status(_ status: VerificationStatus) -> TerminalText {
        let name = TerminalText(trusted: status.rawValue)
        return status == .validToken ? green(name) : red(name)
    }

    private func wrap(_ text: TerminalText, _ code: String) -> TerminalText {
        colored ? TerminalText(trusted: "\u{1B}[\(code)m\(text.rendered)\u{1B}[0m") : text
    }
}

extension TokenReport {
    /// The report for people: status first, then the reason, the fields
    /// aligned, times absolute and relative. Every string from the input is
    /// escaped (``TerminalText``); the signed bytes, when shown, are quoted
    /// line by line behind a `|` so no line of a token can pass for a status line.
    public func text(_ options: TextReportOptions) -> TerminalText {
        let style = options.style
        var lines: [TerminalText] = []
        let status = status.map { style.status($0) } ?? style.yellow("DECODED (signature not checked)")
        let token = self.token ?? verdict?.token
        var heading: TerminalText = "#\(input) \(status)"
        if let token { heading += "  \(token.kind.rawValue) <\(token.root)>" }
        heading += style.dim("  \(source):\(line)")
        lines.append(heading)
        if self.status != .validToken || options.detailed || verdict == nil {
            lines.append("   \(reason)")
        }
        if let verdict {
            if verdict.checksSkipped.contains(where: { $0.check == .signature }) {
                lines.append("   " + style.red("SIGNATURE NOT CHECKED") + ": this verdict says nothing about who issued the token")
            }
        }
        guard let token else {
            if options.detailed, let read = error?.fieldsBeforeError, !read.isEmpty {
                lines.append("   " + style.bold("fields read before the error"))
                lines += Self.aligned(read.map { ($0.path, "\($0.value)") }, indent: "     ")
            }
            return TerminalText.joined(lines, separator: "\n") + "\n"
        }

        var rows: [(String, TerminalText)] = [("requestor", "\(token.token.requestorID)")]
        if let resource = token.token.resourceID {
            if let rss = token.mediaRSS {
                var text: TerminalText = "Media RSS: channel \(TerminalText.quoted(rss.channelTitle))"
                if let guid = rss.itemGUID { text += ", item \(guid)" }
                if let title = rss.itemTitle { text += " (\(title))" }
                rows.append(("resource", text))
            } else {
                rows.append(("resource", "\(resource)"))
            }
        }
        if let mvpd = token.token.mvpdID { rows.append(("mvpd", "\(mvpd)")) }
        if let fingerprint = token.token.fingerprint { rows.append(("fingerprint", "\(fingerprint)")) }
        if let issued = token.token.issuedAt {
            rows.append(("issued", "\(issued.iso8601)  (\(relative(issued, to: options.now, future: "in", past: "ago")))"))
        }
        rows.append(("expires", "\(token.token.expiresAt.iso8601)  (\(expiryText(token.token.expiresAt, now: options.now)))"))
        if options.detailed {
            if case .media(let media) = token.token {
                rows.append(("ttl", "\(media.ttlMilliseconds) ms (\(DurationText.describe(milliseconds: media.ttlMilliseconds)))"))
            }
            let size = token.signatureBytes?.count
            let signature = size.map { "\($0) bytes, looks like \(Self.signatureShape(byteCount: $0))" } ?? "not valid Base64"
            let placement = token.frame.signaturePlacement == .beforeToken ? "before" : "after"
            rows.append(("signature", "\(signature); \(token.frame.signatureForm.rawValue) signatureInfo \(placement) the token"))
            rows.append(("transport", "\(token.transport.description)"))
            rows.append(("signed", "\(token.signedBytes.count) bytes (the token element, exactly as sent)"))
            if let key = verdict?.key { rows.append(("verified by", "\(key.description)")) }
            if let envelope = token.envelope {
                let members = envelope.fields.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                rows.append(("envelope", "\(envelope.version.rawValue), not signed: \(members)"))
            }
        }
        lines += Self.aligned(rows, indent: "   ")
        if options.detailed {
            lines.append("   " + style.bold("fields"))
            lines += Self.aligned(token.fields.map { ($0.path, "\($0.value)") }, indent: "     ")
        }
        if let verdict {
            if options.detailed {
                lines.append("   checks run: \(verdict.checksRun.map(\.rawValue).joined(separator: ", "))")
            }
            // Always the checks the user asked for that did not apply; the rest in detail.
            for skipped in verdict.checksSkipped where options.detailed || skipped.requested {
                lines.append(style.dim("   skipped \(skipped.check.rawValue): \(skipped.reason)"))
            }
        }
        for warning in token.warnings { lines.append("   " + style.yellow("warning: ") + "\(warning)") }
        if options.showSignedBytes {
            lines.append("   " + style.bold("signed bytes") + " (\(token.signedBytes.count)):")
            let text = String(decoding: token.signedBytes, as: UTF8.self)
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                lines.append("   | \(line)")
            }
        }
        return TerminalText.joined(lines, separator: "\n") + "\n"
    }

    /// Rows as `name  value`, the values in one column.
    private static func aligned(_ rows: [(String, TerminalText)], indent: String) -> [TerminalText] {
        let names = rows.map { TerminalText(escaping: $0.0) }
        let width = names.map(\.rendered.count).max() ?? 0
        return zip(names, rows).map { name, row in
            TerminalText(trusted: indent + name.rendered + String(repeating: " ", count: width - name.rendered.count + 2)) + row.1
        }
    }

    private func expiryText(_ expiry: TokenTimestamp, now: TokenTimestamp) -> String {
        let delta = expiry.millisecondsSince1970 - now.millisecondsSince1970
        return delta >= 0 ? "valid for \(DurationText.describe(milliseconds: delta))" : "expired \(DurationText.describe(milliseconds: -delta)) ago"
    }

    private func relative(_ time: TokenTimestamp, to now: TokenTimestamp, future: String, past: String) -> String {
        let delta = time.millisecondsSince1970 - now.millisecondsSince1970
        return delta > 0 ? "\(future) \(DurationText.describe(milliseconds: delta))" : "\(DurationText.describe(milliseconds: -delta)) \(past)"
    }
}
