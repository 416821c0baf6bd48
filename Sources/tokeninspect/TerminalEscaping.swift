/// Makes text that came from input safe to print on a terminal (SPEC §6).
///
/// File names, like token bytes, are chosen by whoever wrote them: a key file
/// named `a\e[2Jb.pem` would clear a support engineer's screen, and U+202E
/// would make a warning read backwards. So every such string is escaped to
/// visible text before it is written: C0 controls and DEL as `\x1b`; C1
/// controls, line and paragraph separators and bidi controls as `\u{202E}`;
/// and the backslash as `\\`, so an escape in the output always means one.
enum TerminalEscaping {
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscaping) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 16)
        for scalar in text.unicodeScalars {
            guard needsEscaping(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar.value {
            case 0x5C: result += "\\\\"
            case 0x00...0x1F, 0x7F: result += "\\x" + hex(scalar.value, width: 2)
            default: result += "\\u{" + hex(scalar.value, width: scalar.value > 0xFF ? 4 : 2) + "}"
            }
        }
        return result
    }

    static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x5C: true
        case 0x2028, 0x2029: true                            // line and paragraph separators
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidi controls
        default: false
        }
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: value > 0xFF)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
