import EntitlementTokens
import FoundationEssentials
import Logging
import Synchronization

/// One line per event on standard error, as `--log-format` says: `text` for
/// people (`2026-11-22T18:40:00Z notice refused status=… reason="…"`) or
/// `json` for collectors (one object a line).
///
/// Every string is escaped by the library's one terminal-text rule
/// (`TerminalText.isUnsafe`, docs/DESIGN.md#text-for-people): a reason can quote a hostile
/// token field, and no field may start a forged log line or reorder one in a
/// viewer (C0, DEL, C1, U+2028/2029, bidi controls and U+FEFF are shown as
/// `TerminalText` shows them in text, and as `\uXXXX` in JSON).
package struct GateLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    let label: String
    let format: LogFormat
    let write: @Sendable (String) -> Void

    package init(label: String, format: LogFormat, write: @escaping @Sendable (String) -> Void = GateLogHandler.standardError) {
        self.label = label
        self.format = format
        self.write = write
    }

    package static let standardError: @Sendable (String) -> Void = { line in
        LibC.writeAll(line, to: .error)
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        // A line about a request names its trace (docs/DESIGN.md#trace-context).
        if let trace = RequestTrace.current {
            let ids = trace.ids
            all["trace_id"] = .string(ids.traceID)
            all["span_id"] = .string(ids.spanID)
        }
        let time = Self.timestamp()
        let keys = all.keys.sorted()
        switch format {
        case .text:
            var line = "\(time) \(event.level) \(Self.textEscaped(event.message.description))"
            for key in keys { line += " \(key)=\(Self.textValue(all[key]!))" }
            write(line + "\n")
        case .json:
            var line = JSONWriter(capacity: 512, controlEscapes: .unicode)
            line.beginObject()
            line.member("time")
            line.string(time)
            line.member("level")
            line.string(event.level.rawValue)
            line.member("message")
            line.string(event.message.description)
            for key in keys {
                line.key(key)
                line.string(Self.flatten(all[key]!))
            }
            line.endObject()
            line.raw("\n")
            write(line.text)
        }
    }

    /// The current second, formatted once per second: a flood of refused
    /// tokens is one log line each, and Foundation's ISO 8601 formatting was
    /// most of a line's cost.
    private static let lastTimestamp = Mutex<(second: Int, text: String)>((-1, ""))

    static func timestamp() -> String {
        let now = Date()
        let second = Int(now.timeIntervalSince1970.rounded(.down))
        return lastTimestamp.withLock { last in
            if last.second != second { last = (second, now.formatted(.iso8601)) }
            return last.text
        }
    }

    static func flatten(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string): string
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): "[" + values.map(flatten).joined(separator: ", ") + "]"
        case .dictionary(let values): "{" + values.sorted { $0.key < $1.key }.map { "\($0.key): \(flatten($0.value))" }.joined(separator: ", ") + "}"
        }
    }

    static func textValue(_ value: Logger.Metadata.Value) -> String {
        let text = flatten(value)
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != "\"" && $0 != "\\" }
        guard !plain else { return text }
        // By scalar: a quote that starts a grapheme (a quote and a combining mark) is escaped too.
        var quoted = "\""
        for scalar in textEscaped(text).unicodeScalars {
            if scalar == "\"" { quoted += "\\\"" } else { quoted.unicodeScalars.append(scalar) }
        }
        return quoted + "\""
    }

    /// Text for a log line: `TerminalText`'s escapes, so the log, the CLI
    /// and the debugger show one hostile string the same way; a backslash of
    /// the input is doubled, so no escape in the log is one the input wrote.
    static func textEscaped(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "\\")) else { return TerminalText.escaped(text) }
        return text.split(separator: "\\", omittingEmptySubsequences: false).map { TerminalText.escaped($0) }.joined(separator: "\\\\")
    }

}
