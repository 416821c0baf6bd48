/// The `catnip` claim (CTA-5007): the networks a token may be presented
/// from. Each entry is an IP address or prefix in RFC 9164's form — tag 52
/// (IPv4) or 54 (IPv6) around the address bytes, or around
/// `[prefix length, prefix bytes without trailing zero bytes]` — or an
/// autonomous system number (an unsigned integer). One entry or an array of them.
///
/// The client must fall in one entry. An AS number cannot be judged from an
/// address alone, so a client that matches no address entry of a token that
/// names an AS is refused as `UNSUPPORTED_CLAIM`, never let through.
public struct CATNetworkRestriction: Sendable, Hashable {
    public enum Entry: Sendable, Hashable {
        /// A prefix: the network's bytes (4 or 16, zero-padded) and its length in bits.
        /// A single address is a prefix of its full length.
        case network(bytes: [UInt8], prefixLength: Int)
        case autonomousSystem(UInt64)
    }

    public let entries: [Entry]

    init(claim value: CBORValue) throws(CDNRefusal) {
        let items = value.arrayItems ?? [value]
        guard !items.isEmpty else { throw .format("catnip is an empty array") }
        var entries: [Entry] = []
        for item in items { entries.append(try Self.entry(item)) }
        self.entries = entries
    }

    private static func entry(_ item: CBORValue) throws(CDNRefusal) -> Entry {
        switch item {
        case .integer(let number) where number >= 0: return .autonomousSystem(UInt64(number))
        case .largeUnsigned(let number): return .autonomousSystem(number)
        case .tagged(let tag, let content) where tag == 52 || tag == 54:
            let width = tag == 52 ? 4 : 16
            switch content {
            case .bytes(let address) where address.count == width:
                return .network(bytes: address, prefixLength: width * 8)
            case .array(let parts) where parts.count == 2:
                guard let length = parts[0].int64, (0...Int64(width * 8)).contains(length), let prefix = parts[1].bytesValue,
                    prefix.count <= width
                else {
                    throw .format(
                        "catnip: an RFC 9164 tag \(tag) prefix is [length 0…\(width * 8), up to \(width) bytes]; the interface form [address, length] is not a restriction"
                    )
                }
                return .network(bytes: prefix + [UInt8](repeating: 0, count: width - prefix.count), prefixLength: Int(length))
            default:
                throw .format("catnip: tag \(tag) holds neither a \(width)-byte address nor a prefix")
            }
        default:
            throw .format("catnip entry \(item.diagnostic()) is not an RFC 9164 address (tag 52 or 54) or an AS number")
        }
    }

    /// The claim binding one address, as the issuer writes it: `[52(h'c0000201')]`.
    static func claimValue(binding address: CDNIPAddress) -> CBORValue {
        .array([.tagged(address.isIPv4 ? 52 : 54, .bytes(address.bytes))])
    }

    /// Passes when `clientIP` falls in an entry; otherwise `IP_MISMATCH`
    /// (also when no client IP is known), or `UNSUPPORTED_CLAIM` for AS numbers.
    public func judge(clientIP: String?) throws(CDNRefusal) {
        guard let clientIP else {
            throw CDNRefusal(.ipMismatch, "the token is bound to \(self) (catnip) and the client's IP is not known")
        }
        guard let address = CDNIPAddress(clientIP) else {
            throw CDNRefusal(
                .ipMismatch,
                "the client IP \(CBORValue.text(clientIP).diagnostic()) is not an IP address; the token is bound to \(self)"
            )
        }
        var namesAutonomousSystem = false
        for entry in entries {
            switch entry {
            case .network(let bytes, let prefixLength):
                if bytes.count == address.bytes.count, Self.prefix(bytes, prefixLength, contains: address.bytes) { return }
            case .autonomousSystem:
                namesAutonomousSystem = true
            }
        }
        if namesAutonomousSystem {
            throw CDNRefusal(.unsupportedClaim, "catnip autonomous system number (the client \(address) is in none of its addresses)")
        }
        throw CDNRefusal(.ipMismatch, "the client \(address) is not in \(self) (catnip)")
    }

    private static func prefix(_ network: [UInt8], _ length: Int, contains address: [UInt8]) -> Bool {
        var remaining = length
        for index in network.indices where remaining > 0 {
            let bits = min(remaining, 8)
            let mask = UInt8(truncatingIfNeeded: 0xFF00 >> bits)
            if network[index] & mask != address[index] & mask { return false }
            remaining -= bits
        }
        return true
    }
}

extension CATNetworkRestriction: CustomStringConvertible {
    /// `192.0.2.1, 2001:db8:0:0:0:0:0:0/32, AS64496`.
    public var description: String {
        entries.map { entry in
            switch entry {
            case .network(let bytes, let length):
                let address = CDNIPAddress(unchecked: bytes)
                return length == bytes.count * 8 ? address.description : "\(address)/\(length)"
            case .autonomousSystem(let number):
                return "AS\(number)"
            }
        }.joined(separator: ", ")
    }
}

extension CDNIPAddress {
    init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}
