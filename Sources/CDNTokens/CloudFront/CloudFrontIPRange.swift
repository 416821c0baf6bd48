/// The `AWS:SourceIp` of a policy's `IpAddress` condition: an IPv4 or IPv6
/// address with a prefix length (CIDR, RFC 4632 §3.1 and RFC 4291 §2.3), and the
/// text it was written as, which the signature covers and a re-encoding keeps.
///
/// Read strictly — dotted-decimal IPv4 without leading zeros, RFC 4291 §2.2 IPv6
/// text without a zone — so a range reads one way here and at the edge.
public struct CloudFrontIPRange: Sendable, Hashable, CustomStringConvertible {
    /// The text as the policy writes it (`203.0.113.7/32`).
    public let text: String
    /// 4 bytes (IPv4) or 16 (IPv6).
    public let network: [UInt8]
    /// How many leading bits of an address must equal ``network``'s.
    public let prefixLength: Int

    public var description: String { text }

    /// Reads `address/prefix`. A bare address is refused: botocore writes `/32`
    /// after one, and a policy read without its prefix would have two meanings.
    public init(parsing text: String) throws(CDNRefusal) {
        let bytes = Array(text.utf8)
        guard bytes.count <= 64, let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else {
            throw .format("the AWS:SourceIp '\(text)' is not an address with a prefix length (203.0.113.7/32)")
        }
        guard let network = Self.address(String(decoding: bytes[..<slash], as: UTF8.self)) else {
            throw .format("the AWS:SourceIp '\(text)' does not hold an IPv4 or IPv6 address")
        }
        let digits = bytes[(slash + 1)...]
        guard (1...3).contains(digits.count), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            digits.first != UInt8(ascii: "0") || digits.count == 1,
            let length = Int(String(decoding: digits, as: UTF8.self)), length <= network.count * 8
        else {
            throw .format("the AWS:SourceIp '\(text)' has a prefix length outside 0–\(network.count * 8)")
        }
        self.text = text
        self.network = network
        self.prefixLength = length
    }

    /// The range holding exactly `address` (a viewer's IP as the gate saw it):
    /// `/32` for IPv4, as botocore writes; `/128` for IPv6, where botocore's `/32`
    /// would admit a whole provider's addresses. The address is written in its
    /// canonical form (RFC 5952 for IPv6).
    public init(singleAddress address: String) throws(CDNRefusal) {
        guard let bytes = Self.address(address) else {
            throw .format("the client IP '\(address)' is not an IPv4 or IPv6 address")
        }
        let text = Self.canonicalText(bytes) + (bytes.count == 4 ? "/32" : "/128")
        try self.init(parsing: text)
    }

    /// True when `address` lies in the range; false for an address of the other
    /// family or text that is no address. An IPv4-mapped IPv6 address
    /// (`::ffff:192.0.2.1`, RFC 4291 §2.5.5.2) is read as its IPv4 address.
    public func contains(_ address: String) -> Bool {
        guard var bytes = Self.address(address) else { return false }
        if bytes.count == 16, network.count == 4, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            bytes = Array(bytes[12...])
        }
        guard bytes.count == network.count else { return false }
        var remaining = prefixLength
        for index in bytes.indices where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if bytes[index] & mask != network[index] & mask { return false }
            remaining -= bits
        }
        return true
    }

    // MARK: - Address text

    /// The 4 or 16 bytes of an IPv4 or IPv6 address's text, or nil (no brackets, as a policy writes it).
    static func address(_ text: String) -> [UInt8]? {
        guard !text.hasPrefix("[") else { return nil }
        return CDNIPAddress(text, mappingIPv4: false)?.bytes
    }

    /// The address text a policy writes (RFC 5952 for IPv6).
    package static func canonicalText(_ bytes: [UInt8]) -> String { CDNIPAddress.canonicalText(bytes) }
}
