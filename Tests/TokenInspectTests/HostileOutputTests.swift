import EntitlementTokens
import Foundation
import Testing

/// Issue 10, class 1: no input can drive the terminal. Every string that
/// comes from input — field values, tag names in framing errors, the XML
/// declaration's pseudo-attributes, REST envelopes and denials, file names,
/// bytes quoted by transport errors, the signed bytes — reaches stdout and
/// stderr escaped, through the binary, in every output format.
@Suite struct HostileOutputTests {
    /// Every scalar that must never reach a terminal raw: C0, DEL, C1, the
    /// bidi controls, the line and paragraph separators, the BOM.
    static let unsafeScalars: [Unicode.Scalar] =
        (Array(0x00...0x1F) + Array(0x7F...0x9F)
        + [0x061C, 0x200E, 0x200F] + Array(0x2028...0x202E) + Array(0x2066...0x2069) + [0xFEFF])
        .map { Unicode.Scalar(UInt32($0))! }

    /// The scalars XML 1.0 can carry in text (as character references).
    static let xmlCarriable = unsafeScalars.filter { $0.value == 0x09 || $0.value == 0x0A || $0.value == 0x0D || $0.value >= 0x7F }

    /// What a forger would write: erase the line, draw a green status, set the clipboard.
    static let forgery = "\u{1B}[1A\u{1B}[2K\r#1 VALID_TOKEN\u{1B}]52;c;cm0gLXJmIH4=\u{07}\u{9B}31m\u{202E}"

    /// True when `bytes` holds no unsafe scalar: only \n among the controls (and
    /// ESC only as the start of our own colour codes, which are off here).
    static func isTerminalSafe(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0 != "\n" && unsafeScalars.contains($0) }
    }

    static func xmlEscaped(_ text: String) -> String {
        text.unicodeScalars.map { scalar -> String in
            if xmlCarriable.contains(scalar) { return "&#x\(String(scalar.value, radix: 16));" }
            if unsafeScalars.contains(scalar) { return "" }  // XML cannot carry the other C0 controls
            switch scalar {
            case "<": return "&lt;"
            case "&": return "&amp;"
            default: return String(scalar)
            }
        }.joined()
    }

    /// A correctly signed media token whose field `name` holds `value` (XML-escaped).
    static func signedToken(_ fields: [String: String], root: String = "authToken") throws -> String {
        var values = [
            "requestorID": "TNT", "resourceID": "TNT", "ttl": "420000", "issueTime": "2026-01-15 04:00:00 -0800",
            "mvpdId": "Comcast_SSO",
        ]
        for (key, value) in fields { values[key] = value }
        let order =
            ["sessionGUID", "requestorID", "resourceID", "ttl", "issueTime", "mvpdId"]
            + fields.keys.filter {
                !["sessionGUID", "requestorID", "resourceID", "ttl", "issueTime", "mvpdId"].contains($0)
            }.sorted()
        let element = "<\(root)>" + order.compactMap { name in values[name].map { "<\(name)>\(xmlEscaped($0))</\(name)>" } }.joined() + "</\(root)>"
        let key = try SigningKey(path: CLI.packageRoot.appendingPathComponent("Samples/keys/test-rsa2048.pem").path)
        let signature = try key.signature(for: Array(element.utf8))
        return "<signatureInfo>\(Data(signature).base64EncodedString())<signatureInfo>\(element)"
    }

    static let verifyFlags = [
        "--key", "Samples/keys/trusted", "--now", "2026-01-15T12:03:00Z", "--requestor", "HBO",
        "--resource", "HBO", "--mvpd", "Other_MVPD",
    ]

    /// Each input-derived place, with the whole hostile payload in it.
    static func hostileInputs() throws -> [(String, String)] {
        let every = String(String.UnicodeScalarView(unsafeScalars)) + forgery
        let jsonEvery = every.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined()
        let valid = try signedToken([:])
        return [
            ("xml declaration", "<?xml version=\"1.0\" encoding=\"\(every)\"?><signatureInfo>x<signatureInfo><authToken/>"),
            ("tag name", "<signatureInfo>x<signatureInfo><auth\(forgery)Token/>"),
            ("requestor", try signedToken(["requestorID": every])),
            ("resource", try signedToken(["resourceID": every])),
            ("mvpd", try signedToken(["mvpdId": every])),
            ("unknown field", try signedToken(["extra": every])),
            (
                "media rss title",
                try signedToken(["resourceID": "<rss version=\"2.0\"><channel><title>\(every.filter { $0 != "\u{0}" })</title></channel></rss>"])
            ),
            ("rest v1 envelope", "{\"serializedToken\": \"\(Data(valid.utf8).base64EncodedString())\", \"expires\": \"\(jsonEvery)\"}"),
            (
                "rest v2 denial",
                "{\"decisions\": [{\"resource\": \"\(jsonEvery)\", \"authorized\": false, \"error\": {\"details\": \"\(jsonEvery)\"}}]}"
            ),
            ("base64 byte", "PHNpZ25hdHVyZUluZm8+\(forgery)"),
            ("percent byte", "%3Csignature%1B%5B2KInfo%3E"),
        ]
    }

    @Test func noInputDerivedStringReachesTheTerminalRaw() throws {
        for (place, input) in try Self.hostileInputs() {
            for command in [["inspect"], ["verify"] + Self.verifyFlags] {
                for format in [["--show-signed-bytes"], ["--format", "json"], ["--format", "jsonl"]] {
                    let result = try CLI.run(command + format + ["-"], stdin: input + "\n")
                    #expect(result.status == 1 || (command == ["inspect"] && result.status == 0), "\(place) \(command[0]) \(format)")
                    #expect(Self.isTerminalSafe(result.stdout), "\(place): \(command[0]) \(format) wrote a control to stdout")
                    #expect(Self.isTerminalSafe(result.stderr), "\(place): \(command[0]) \(format) wrote a control to stderr")
                    // One status line per record: the forged "#1 VALID_TOKEN" never stands at a line's start.
                    if format == ["--show-signed-bytes"] {
                        let statusLines = result.stdout.split(separator: "\n").filter { $0.hasPrefix("#") }
                        #expect(statusLines.count == 1, "\(place): \(statusLines)")
                        #expect(!result.stdout.split(separator: "\n").contains { $0.hasPrefix("#1 VALID_TOKEN") })
                    }
                }
            }
        }
    }

    @Test func aFileNameIsEscapedInErrors() throws {
        let result = try CLI.run(["inspect", "@/nonexistent/\(Self.forgery)"])
        #expect(result.status == 2)
        #expect(Self.isTerminalSafe(result.stderr))
        #expect(result.stderr.contains("\\x1b[1A"))
    }

    @Test func terminalTextEscapesEveryUnsafeScalarAndNothingElse() {
        for scalar in Self.unsafeScalars {
            let escaped = TerminalText.escaped("a\(Character(scalar))b")
            #expect(Self.isTerminalSafe(escaped) && escaped.hasPrefix("a\\") && escaped.hasSuffix("b"), "U+\(String(scalar.value, radix: 16))")
        }
        #expect(TerminalText.escaped("\u{1B}[2K") == "\\x1b[2K")
        #expect(TerminalText.escaped("\u{202E}") == "\\u{202E}")
        #expect(TerminalText.escaped("Café Ω 日本 🎬 <rss>") == "Café Ω 日本 🎬 <rss>")
        let input = "\u{1B}"
        let text: TerminalText = "literal \(input) kept \(TerminalText(escaping: input))"
        #expect(text.rendered == "literal \\x1b kept \\x1b")
    }
}
