import EntitlementTokens

/// Output for people: status first and coloured, fields aligned, times
/// absolute and relative to `now`.
struct TextRenderer {
    var style: Style
    var now: TokenTimestamp
    var detailed: Bool
    var showSignedBytes: Bool

    func block(_ outcome: Outcome) -> String {
        var lines: [String] = []
        let status = outcome.status.map { colored($0) } ?? style.yellow("DECODED (signature not checked)")
        let token = outcome.token ?? outcome.verdict?.token
        var heading = "#\(outcome.input) \(status)"
        if let token { heading += "  \(token.kind.rawValue) <\(token.root)>" }
        heading += style.dim("  \(outcome.source):\(outcome.line)")
        lines.append(heading)
        if outcome.status != .validToken || detailed || outcome.verdict == nil {
            lines.append("   " + outcome.reason)
        }
        guard let token else { return lines.joined(separator: "\n") + "\n" }

        var rows: [(String, String)] = [
            ("requestor", token.token.requestorID),
        ]
        if let resource = token.token.resourceID {
            if let rss = token.mediaRSS {
                rows.append(("resource", "Media RSS: channel '\(rss.channelTitle)'" + (rss.itemGUID.map { ", item \($0)" } ?? "")
                                + (rss.itemTitle.map { " (\($0))" } ?? "")))
            } else {
                rows.append(("resource", resource))
            }
        }
        if let mvpd = token.token.mvpdID { rows.append(("mvpd", mvpd)) }
        if let fingerprint = token.token.fingerprint { rows.append(("fingerprint", fingerprint)) }
        if let issued = token.token.issuedAt { rows.append(("issued", "\(issued.iso8601)  (\(relative(issued, future: "in", past: "ago")))")) }
        rows.append(("expires", "\(token.token.expiresAt.iso8601)  (\(expiryText(token.token.expiresAt)))"))
        if detailed {
            if case .media(let media) = token.token {
                rows.append(("ttl", "\(media.ttlMilliseconds) ms (\(Self.duration(media.ttlMilliseconds)))"))
            }
            let size = token.signatureBytes?.count
            let signature = size.map { "\($0) bytes, looks like \(Outcome.signatureShape(byteCount: $0))" } ?? "not valid Base64"
            rows.append(("signature", "\(signature); \(token.frame.signatureForm.rawValue) signatureInfo \(token.frame.signaturePlacement == .beforeToken ? "before" : "after") the token"))
            rows.append(("transport", token.transport.description))
            rows.append(("signed", "\(token.signedBytes.count) bytes (the token element, exactly as sent)"))
            if let key = outcome.verdict?.key { rows.append(("verified by", key.description)) }
            if let envelope = token.envelope {
                rows.append(("envelope", "\(envelope.version.rawValue), not signed: " + envelope.fields.map { "\($0.key)=\($0.value)" }.joined(separator: " ")))
            }
        }
        lines += aligned(rows, indent: "   ")
        if detailed {
            lines.append("   " + style.bold("fields"))
            lines += aligned(token.fields.map { ($0.path, $0.value) }, indent: "     ")
            if let verdict = outcome.verdict {
                lines.append("   checks run: " + verdict.checksRun.map(\.rawValue).joined(separator: ", "))
                for skipped in verdict.checksSkipped {
                    lines.append(style.dim("   skipped \(skipped.check.rawValue): \(skipped.reason)"))
                }
            }
        }
        for warning in token.warnings { lines.append("   " + style.yellow("warning: ") + warning) }
        if showSignedBytes {
            lines.append("   " + style.bold("signed bytes") + " (\(token.signedBytes.count)):")
            lines.append(String(decoding: token.signedBytes, as: UTF8.self))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    func colored(_ status: VerificationStatus) -> String {
        status == .validToken ? style.green(status.rawValue) : style.red(status.rawValue)
    }

    private func aligned(_ rows: [(String, String)], indent: String) -> [String] {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { name, value in
            indent + name + String(repeating: " ", count: width - name.count + 2) + Self.printable(value)
        }
    }

    /// Control characters in hostile field values must not drive the terminal.
    static func printable(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                result += scalar == "\n" ? "\\n" : scalar == "\t" ? "\\t" : "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private func expiryText(_ expiry: TokenTimestamp) -> String {
        let delta = expiry.millisecondsSince1970 - now.millisecondsSince1970
        return delta >= 0 ? "valid for \(Self.duration(delta))" : "expired \(Self.duration(-delta)) ago"
    }

    private func relative(_ time: TokenTimestamp, future: String, past: String) -> String {
        let delta = time.millisecondsSince1970 - now.millisecondsSince1970
        return delta > 0 ? "\(future) \(Self.duration(delta))" : "\(Self.duration(-delta)) \(past)"
    }

    static func duration(_ milliseconds: Int64) -> String {
        DurationText.describe(milliseconds: milliseconds)
    }
}
