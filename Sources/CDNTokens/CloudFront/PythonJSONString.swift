/// A string as Python's `json.dumps` writes it with its defaults
/// (`ensure_ascii=True`): `"` and `\` escaped with a backslash; backspace, form
/// feed, line feed, carriage return and tab as `\b \f \n \r \t`; every other
/// byte outside printable ASCII (controls, DEL, non-ASCII) as `\u` and four
/// lower-case hex digits, UTF-16 surrogate pairs above U+FFFF; `/` not escaped.
/// botocore signs exactly these bytes, so a reader rebuilding a canned policy
/// must write them too.
package enum PythonJSONString {
    package static func append(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case "\\": out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case "\u{08}": out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case "\u{0C}": out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case "\n": out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case "\r": out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case "\t": out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case " "..."~": out.append(UInt8(scalar.value))
            default:
                for unit in String(scalar).utf16 { appendEscape(unit, to: &out) }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(_ unit: UInt16, to out: inout [UInt8]) {
        let digits = Array("0123456789abcdef".utf8)
        out += [UInt8(ascii: "\\"), UInt8(ascii: "u")]
        for shift in stride(from: 12, through: 0, by: -4) {
            out.append(digits[Int(unit >> UInt16(shift) & 0xF)])
        }
    }

    /// True when `text` is written as itself (printable ASCII without `"` or `\`).
    package static func needsNoEscaping(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }
}
