import EntitlementTokens

/// JSON string literals for everything the gate writes as JSON by hand (log
/// lines, `/readyz`, error bodies, the debugger's answers).
enum JSONText {
    /// A JSON string: valid JSON whatever the input, with every scalar the
    /// library's terminal-text rule names written `\uXXXX` (a collector's
    /// viewer is a terminal too).
    static func quoted(_ text: String) -> String {
        // Most values (tokens, cookies, URLs, statuses) are printable ASCII
        // with nothing to escape: quoted as they are, without the walk below.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            return "\"" + text + "\""
        }
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case _ where TerminalText.isUnsafe(scalar): output += "\\u" + hex(scalar.value, width: 4)
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output + "\""
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: false)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

}
