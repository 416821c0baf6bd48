import EntitlementTokens
import Foundation
import Logging
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// Issue 20 item 8b: the gate's log lines escape with the library's one
/// terminal-text rule (`TerminalText`): no scalar it names — C0/C1, DEL, the
/// line and paragraph separators, bidi controls, U+FEFF — reaches a log raw,
/// in text or JSON, in the message or in a metadata value; JSON stays JSON.
@Suite struct GateLogEscapingTests {
    static let hostile = "id\u{FEFF}x\u{202E}gpj.exe\r\nforged 2026-01-01T00:00:00Z notice ok\u{2028}\u{1B}[2J\u{85}\u{7F}\u{2066}"

    static func lines(_ format: LogFormat) -> [String] {
        let capture = LogCapture(format: format)
        capture.logger.notice("refused \(hostile)", metadata: ["reason": .string(hostile), "resource": .string("TNT\\u{FEFF}")])
        return capture.all
    }

    static func rawUnsafe(_ line: String) -> [Unicode.Scalar] {
        line.dropLast().unicodeScalars.filter(TerminalText.isUnsafe)
    }

    @Test(arguments: [LogFormat.text, .json])
    func noDangerousScalarReachesALogLine(format: LogFormat) throws {
        let lines = Self.lines(format)
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(line.hasSuffix("\n"))
        #expect(Self.rawUnsafe(line).isEmpty, "\(Self.rawUnsafe(line).map { String($0.value, radix: 16) })")
        #expect(!line.dropLast().contains("\n") && !line.contains("\r"))
    }

    @Test func textShowsTheLibrarysEscapes() throws {
        let line = try #require(Self.lines(.text).first)
        let escaped = TerminalText.escaped(Self.hostile)
        #expect(escaped.contains("\\u{FEFF}"))
        #expect(line.contains("refused \(escaped)"), "\(line)")
        // A backslash of the input is doubled: the log's escapes are the log's own.
        #expect(line.contains(#"resource="TNT\\u{FEFF}""#), "\(line)")
    }

    @Test func jsonLineIsPinned() throws {
        let line = try #require(Self.lines(.json).first)
        let escaped = #"id\ufeffx\u202egpj.exe\u000d\u000aforged 2026-01-01T00:00:00Z notice ok\u2028\u001b[2J\u0085\u007f\u2066"#
        let time = try #require(line.split(separator: "\"").dropFirst(3).first)
        #expect(
            line == #"{"time":""# + time + #"","level":"notice","message":"refused "# + escaped + #"","reason":""# + escaped
                + #"","resource":"TNT\\u{FEFF}"}"# + "\n"
        )
    }

    @Test func jsonStaysJSONAndKeepsTheText() throws {
        let line = try #require(Self.lines(.json).first)
        #expect(line.contains("\\ufeff") && line.contains("\\u202e") && line.contains("\\u000d\\u000a"), "\(line)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["reason"] as? String == Self.hostile)
        #expect(object["message"] as? String == "refused \(Self.hostile)")
        #expect(object["resource"] as? String == "TNT\\u{FEFF}")
    }
}
