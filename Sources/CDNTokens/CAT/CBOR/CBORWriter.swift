extension CBORValue {
    /// The item in preferred serialization (RFC 8949 §4.1): every integer,
    /// length and tag in its shortest head; map pairs in the order held; floats
    /// in the width they were read or made with.
    public func cbor() -> [UInt8] {
        var output: [UInt8] = []
        write(into: &output)
        return output
    }

    func write(into output: inout [UInt8]) {
        switch self {
        case .integer(let value): Self.writeInteger(value, into: &output)
        case .largeUnsigned(let value):
            Self.writeHead(major: 0, argument: value, into: &output)
        case .bytes(let bytes): Self.writeBytes(bytes, into: &output)
        case .text(let text): Self.writeText(text, into: &output)
        case .array(let items):
            Self.writeHead(major: 4, argument: UInt64(items.count), into: &output)
            for item in items { item.write(into: &output) }
        case .map(let entries):
            Self.writeHead(major: 5, argument: UInt64(entries.count), into: &output)
            for entry in entries {
                entry.key.write(into: &output)
                entry.value.write(into: &output)
            }
        case .tagged(let tag, let content):
            Self.writeHead(major: 6, argument: tag, into: &output)
            content.write(into: &output)
        case .bool(let value): output.append(value ? 0xF5 : 0xF4)
        case .null: output.append(0xF6)
        case .undefined: output.append(0xF7)
        case .simple(let value):
            if value < 24 { output.append(0xE0 | value) } else { output += [0xF8, value] }
        case .float(let bits, let byteCount):
            let width = byteCount == 2 || byteCount == 4 ? byteCount : 8
            output.append(width == 2 ? 0xF9 : width == 4 ? 0xFA : 0xFB)
            for shift in stride(from: (width - 1) * 8, through: 0, by: -8) { output.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        }
    }

    // The items a writer that builds no tree (the CAT issuer) writes one by one.

    static func writeInteger(_ value: Int64, into output: inout [UInt8]) {
        if value >= 0 {
            writeHead(major: 0, argument: UInt64(value), into: &output)
        } else {
            writeHead(major: 1, argument: UInt64(-1 - value), into: &output)
        }
    }

    static func writeBytes(_ bytes: [UInt8], into output: inout [UInt8]) {
        writeHead(major: 2, argument: UInt64(bytes.count), into: &output)
        output.append(contentsOf: bytes)
    }

    static func writeText(_ text: String, into output: inout [UInt8]) {
        writeHead(major: 3, argument: UInt64(text.utf8.count), into: &output)
        output.append(contentsOf: text.utf8)
    }

    /// The head of an array of `count` items, or of a map of `count` pairs.
    static func writeArrayHead(count: Int, into output: inout [UInt8]) { writeHead(major: 4, argument: UInt64(count), into: &output) }
    static func writeMapHead(count: Int, into output: inout [UInt8]) { writeHead(major: 5, argument: UInt64(count), into: &output) }

    /// An initial byte and its argument in the shortest form (RFC 8949 §3, §4.2.1).
    static func writeHead(major: UInt8, argument: UInt64, into output: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24: output.append(type | UInt8(argument))
        case 24...0xFF: output += [type | 24, UInt8(argument)]
        case 0x100...0xFFFF: output += [type | 25, UInt8(argument >> 8), UInt8(truncatingIfNeeded: argument)]
        case 0x1_0000...0xFFFF_FFFF:
            output.append(type | 26)
            for shift in stride(from: 24, through: 0, by: -8) { output.append(UInt8(truncatingIfNeeded: argument >> UInt64(shift))) }
        default:
            output.append(type | 27)
            for shift in stride(from: 56, through: 0, by: -8) { output.append(UInt8(truncatingIfNeeded: argument >> UInt64(shift))) }
        }
    }
}
