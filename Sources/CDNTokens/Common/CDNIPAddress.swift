import EntitlementTokens

/// An IP address as the 4 or 16 bytes every CDN format compares (`catnip`,
/// CloudFront's `AWS:SourceIp`, the viewer's IP an issuer binds), read
/// strictly from text: IPv4 dotted decimal without leading zeros (`010` is
/// octal to some readers), IPv6 per RFC 4291 §2.2 (optionally in `[…]`, no
/// zone). An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is its IPv4 address,
/// as a dual-stack socket reports an IPv4 viewer.
public struct CDNIPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6).
    public let bytes: [UInt8]

    public init?(_ text: String) {
        self.init(text, mappingIPv4: true)
    }

    /// `mappingIPv4`: false keeps `::ffff:a.b.c.d` as its 16 bytes, as
    /// CloudFront's `AWS:SourceIp` ranges compare it (`::ffff:0:0/96`).
    public init?(_ text: String, mappingIPv4: Bool) {
        var characters = Array(text.utf8)
        if characters.first == UInt8(ascii: "["), characters.last == UInt8(ascii: "]") {
            characters = Array(characters.dropFirst().dropLast())
        }
        guard !characters.isEmpty, characters.count <= 45 else { return nil }
        if let v4 = Self.ipv4(characters[...]) {
            bytes = v4
        } else if let v6 = Self.ipv6(characters) {
            bytes = mappingIPv4 && v6[0..<12].elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) ? Array(v6[12...]) : v6
        } else {
            return nil
        }
    }

    public var isIPv4: Bool { bytes.count == 4 }

    /// Dotted decimal, or RFC 5952 §4: lower-case hex, no leading zeros, the
    /// longest run of two or more zero groups (the first of equals) as `::`.
    public var description: String { Self.canonicalText(bytes) }

    public static func canonicalText(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map { String($0) }.joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        var best = (start: -1, length: 0)
        var run = (start: -1, length: 0)
        for (index, group) in groups.enumerated() {
            if group == 0 {
                run = run.start < 0 ? (index, 1) : (run.start, run.length + 1)
                if run.length > best.length { best = run }
            } else {
                run = (-1, 0)
            }
        }
        let hex = groups.map { String($0, radix: 16) }
        guard best.length >= 2 else { return hex.joined(separator: ":") }
        return hex[..<best.start].joined(separator: ":") + "::" + hex[(best.start + best.length)...].joined(separator: ":")
    }

    static func ipv4(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                part.count == 1 || part.first != UInt8(ascii: "0")
            else { return nil }
            let value = part.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard value <= 255 else { return nil }
            bytes.append(UInt8(value))
        }
        return bytes
    }

    static func ipv6(_ text: [UInt8]) -> [UInt8]? {
        let colon = UInt8(ascii: ":")
        // At most one "::" (RFC 4291 §2.2): the groups before it and after it.
        var gap: Int? = nil
        var index = 0
        while index + 1 < text.count {
            if text[index] == colon, text[index + 1] == colon {
                guard gap == nil else { return nil }
                gap = index
                index += 2
            } else {
                index += 1
            }
        }
        let head: [UInt16]
        let tail: [UInt16]
        if let gap {
            guard let before = groups(text[..<gap], mayEndInIPv4: false),
                let after = groups(text[(gap + 2)...], mayEndInIPv4: true), before.count + after.count < 8
            else { return nil }
            head = before
            tail = after
        } else {
            guard let all = groups(text[...], mayEndInIPv4: true), all.count == 8 else { return nil }
            head = all
            tail = []
        }
        let words = head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        return words.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    /// Colon-separated hex groups of 1 to 4 digits; the last may be dotted IPv4 (two groups).
    private static func groups(_ text: ArraySlice<UInt8>, mayEndInIPv4: Bool) -> [UInt16]? {
        guard !text.isEmpty else { return [] }
        let parts = text.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var words: [UInt16] = []
        for (index, part) in parts.enumerated() {
            if mayEndInIPv4, index == parts.count - 1, part.contains(UInt8(ascii: ".")) {
                guard let v4 = ipv4(part) else { return nil }
                words += [UInt16(v4[0]) << 8 | UInt16(v4[1]), UInt16(v4[2]) << 8 | UInt16(v4[3])]
                continue
            }
            guard (1...4).contains(part.count) else { return nil }
            var value: UInt16 = 0
            for digit in part {
                guard let nibble = ByteRules.hexValue(digit) else { return nil }
                value = value << 4 | UInt16(nibble)
            }
            words.append(value)
        }
        return words.count <= 8 ? words : nil
    }
}
