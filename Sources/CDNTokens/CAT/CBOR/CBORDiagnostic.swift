import EntitlementTokens

/// Names to print as comments beside integer map keys in diagnostic notation
/// (`4 /exp/: 1768478400`): `names` for the keys of this map, `nested` for
/// the maps that are the values of those keys.
public struct CBORDiagnosticLabels: Sendable {
    public var names: [Int64: String]
    public var nested: [Int64: CBORDiagnosticLabels]

    public init(names: [Int64: String] = [:], nested: [Int64: CBORDiagnosticLabels] = [:]) {
        self.names = names
        self.nested = nested
    }
}

extension CBORValue {
    /// The item in CBOR diagnostic notation (RFC 8949 §8): `{1 /iss/: "tnt"}`,
    /// byte strings as `h'…'`, tags as `17(…)`, floats with their value.
    /// Text is written JSON-style with every byte outside printable ASCII
    /// escaped (`\u00e9`, `\u202e`), so the output is plain ASCII whatever the
    /// token held and safe to print; the `/…/` comments come only from `labels`.
    public func diagnostic(labels: CBORDiagnosticLabels? = nil) -> String {
        var output = ""
        writeDiagnostic(into: &output, labels: labels)
        return output
    }

    private func writeDiagnostic(into output: inout String, labels: CBORDiagnosticLabels?) {
        switch self {
        case .integer(let value): output += String(value)
        case .largeUnsigned(let value): output += String(value)
        case .bytes(let bytes): output += "h'" + ByteRules.lowercaseHex(bytes) + "'"
        case .text(let text): Self.writeQuoted(text, into: &output)
        case .array(let items):
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += ", " }
                item.writeDiagnostic(into: &output, labels: nil)
            }
            output += "]"
        case .map(let entries):
            output += "{"
            for (index, entry) in entries.enumerated() {
                if index > 0 { output += ", " }
                entry.key.writeDiagnostic(into: &output, labels: nil)
                let label = entry.key.int64
                if let label, let name = labels?.names[label] { output += " /\(name)/" }
                output += ": "
                entry.value.writeDiagnostic(into: &output, labels: label.flatMap { labels?.nested[$0] })
            }
            output += "}"
        case .tagged(let tag, let content):
            output += String(tag) + "("
            content.writeDiagnostic(into: &output, labels: labels)
            output += ")"
        case .bool(let value): output += value ? "true" : "false"
        case .null: output += "null"
        case .undefined: output += "undefined"
        case .simple(let value): output += "simple(\(value))"
        case .float(_, let byteCount):
            let value = doubleValue ?? .nan
            let text: String
            if value.isNaN {
                text = "NaN"
            } else if value.isInfinite {
                text = value < 0 ? "-Infinity" : "Infinity"
            } else {
                let plain = String(value)
                text = plain.contains(".") || plain.contains("e") ? plain : plain + ".0"
            }
            // The encoding indicator (RFC 8949 §8.1) keeps the width visible: _1 half, _2 single, _3 double.
            output += text + (byteCount == 2 ? "_1" : byteCount == 4 ? "_2" : "_3")
        }
    }

    private static func writeQuoted(_ text: String, into output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case " "..."~": output.unicodeScalars.append(scalar)
            default:
                if scalar.value > 0xFFFF {
                    let value = scalar.value - 0x10000
                    output += escapedUnit(0xD800 + (value >> 10)) + escapedUnit(0xDC00 + (value & 0x3FF))
                } else {
                    output += escapedUnit(scalar.value)
                }
            }
        }
        output += "\""
    }

    private static func escapedUnit(_ unit: UInt32) -> String {
        let digits = ByteRules.lowercaseHex([UInt8(unit >> 8), UInt8(unit & 0xFF)])
        return "\\u" + digits
    }
}
