import EntitlementTokens

/// Hex text as bytes: the HMAC keys of EdgeAuth and CAT profiles, a CAT
/// pasted as hex. Digits of either case, two per byte, nothing else.
enum CDNHex {
    static func bytes(_ digits: ArraySlice<UInt8>) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            guard let high = ByteRules.hexValue(digits[index]), let low = ByteRules.hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}

extension Array where Element == UInt8 {
    /// The bytes without ASCII white space at either end (a key file's final newline).
    func trimmingASCIIWhitespace() -> ArraySlice<UInt8> {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || ($0 >= 0x09 && $0 <= 0x0D) }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return [] }
        return self[first...last]
    }
}
