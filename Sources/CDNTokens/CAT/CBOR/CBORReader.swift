extension CBORValue {
    /// Reads exactly one CBOR item from `bytes` (RFC 8949 §3): trailing bytes,
    /// indefinite lengths, duplicate map keys, invalid UTF-8 in text, negative
    /// integers below `Int64.min` and anything past `limits` are refused.
    public init(cbor bytes: [UInt8], limits: CBORLimits = .commonAccessToken) throws(CBORError) {
        guard bytes.count <= limits.maximumInputBytes else {
            throw CBORError(.tooLarge, at: limits.maximumInputBytes, "\(bytes.count) bytes, more than the \(limits.maximumInputBytes) allowed")
        }
        var cursor = CBORCursor(bytes: bytes, limits: limits)
        self = try cursor.readItem(depth: 1)
        guard cursor.offset == bytes.count else {
            throw CBORError(.trailingBytes, at: cursor.offset, "\(bytes.count - cursor.offset) bytes after the item")
        }
    }
}

/// A position in bytes being read; every read checks what remains first.
struct CBORCursor {
    let bytes: [UInt8]
    let limits: CBORLimits
    private(set) var offset = 0

    init(bytes: [UInt8], limits: CBORLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    var remaining: Int { bytes.count - offset }

    mutating func readItem(depth: Int) throws(CBORError) -> CBORValue {
        let start = offset
        guard depth <= limits.maximumDepth else {
            throw CBORError(.tooDeep, at: start, "nested deeper than \(limits.maximumDepth)")
        }
        guard remaining > 0 else { throw CBORError(.truncated, at: start, "the input ends where an item should start") }
        let initial = bytes[offset]
        offset += 1
        let major = initial >> 5
        let additional = initial & 0x1F
        if additional == 31 {
            throw CBORError(
                .indefiniteLength,
                at: start,
                major == 7 ? "a break byte outside an indefinite-length item" : "an indefinite length (only definite lengths are read)"
            )
        }
        if major == 7 { return try readSimpleOrFloat(additional, start: start) }
        let argument = try readArgument(additional, start: start)
        switch major {
        case 0:
            return argument <= UInt64(Int64.max) ? .integer(Int64(argument)) : .largeUnsigned(argument)
        case 1:
            guard argument <= UInt64(Int64.max) else {
                throw CBORError(.integerOverflow, at: start, "the negative integer −1 − \(argument) is below −2⁶³")
            }
            return .integer(-1 - Int64(argument))
        case 2:
            return .bytes(try take(argument, start: start, what: "byte string"))
        case 3:
            let raw = try take(argument, start: start, what: "text string")
            guard let text = String(validating: raw, as: UTF8.self) else {
                throw CBORError(.invalidUTF8, at: start, "a text string that is not valid UTF-8")
            }
            return .text(text)
        case 4:
            // Each item takes at least one byte: a count above what remains cannot be met.
            guard argument <= UInt64(remaining) else {
                throw CBORError(.truncated, at: start, "an array of \(argument) items with \(remaining) bytes left")
            }
            var items: [CBORValue] = []
            items.reserveCapacity(Int(argument))
            for _ in 0..<Int(argument) { items.append(try readItem(depth: depth + 1)) }
            return .array(items)
        case 5:
            guard argument <= UInt64(remaining / 2) else {
                throw CBORError(.truncated, at: start, "a map of \(argument) pairs with \(remaining) bytes left")
            }
            var entries: [CBORMapEntry] = []
            entries.reserveCapacity(Int(argument))
            var keys = Set<CBORValue>(minimumCapacity: Int(argument))
            for _ in 0..<Int(argument) {
                let keyOffset = offset
                let key = try readItem(depth: depth + 1)
                guard keys.insert(key).inserted else {
                    throw CBORError(.duplicateMapKey, at: keyOffset, "a map key written twice")
                }
                entries.append(CBORMapEntry(key, try readItem(depth: depth + 1)))
            }
            return .map(entries)
        default:  // 6
            return .tagged(argument, try readItem(depth: depth + 1))
        }
    }

    /// The argument of an initial byte (RFC 8949 §3): in the byte itself, or in
    /// the 1, 2, 4 or 8 bytes that follow. A wider form than needed is read.
    private mutating func readArgument(_ additional: UInt8, start: Int) throws(CBORError) -> UInt64 {
        switch additional {
        case 0..<24: return UInt64(additional)
        case 24: return try readUnsigned(byteCount: 1, start: start)
        case 25: return try readUnsigned(byteCount: 2, start: start)
        case 26: return try readUnsigned(byteCount: 4, start: start)
        case 27: return try readUnsigned(byteCount: 8, start: start)
        default: throw CBORError(.reservedAdditionalInformation, at: start, "additional information \(additional) is reserved")
        }
    }

    private mutating func readUnsigned(byteCount: Int, start: Int) throws(CBORError) -> UInt64 {
        guard remaining >= byteCount else { throw CBORError(.truncated, at: start, "the input ends inside an item's head") }
        var value: UInt64 = 0
        for index in offset..<(offset + byteCount) { value = value << 8 | UInt64(bytes[index]) }
        offset += byteCount
        return value
    }

    private mutating func take(_ length: UInt64, start: Int, what: String) throws(CBORError) -> [UInt8] {
        // Compared before any allocation: a declared length never reserves memory.
        guard length <= UInt64(remaining) else {
            throw CBORError(.truncated, at: start, "a \(what) of \(length) bytes with \(remaining) bytes left")
        }
        let end = offset + Int(length)
        defer { offset = end }
        return Array(bytes[offset..<end])
    }

    private mutating func readSimpleOrFloat(_ additional: UInt8, start: Int) throws(CBORError) -> CBORValue {
        switch additional {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 0..<20: return .simple(additional)
        case 24:
            let value = UInt8(try readUnsigned(byteCount: 1, start: start))
            guard value >= 32 else { throw CBORError(.malformedSimpleValue, at: start, "simple value \(value) written in two bytes") }
            return .simple(value)
        case 25: return .float(bits: try readUnsigned(byteCount: 2, start: start), byteCount: 2)
        case 26: return .float(bits: try readUnsigned(byteCount: 4, start: start), byteCount: 4)
        case 27: return .float(bits: try readUnsigned(byteCount: 8, start: start), byteCount: 8)
        default: throw CBORError(.reservedAdditionalInformation, at: start, "additional information \(additional) is reserved")
        }
    }
}
