/// Where the Redis server is and how to log in: what a `redis://` or
/// `rediss://` URL says.
///
/// `redis://[[user]:password@]host[:port][/db]`, port 6379 by default, database
/// 0 by default; `rediss://` is the same over TLS. User and password are
/// percent-decoded; an IPv6 host is written in brackets. The description
/// never shows the password.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var usesTLS: Bool
    /// An ACL user (Redis 6+); nil logs in as `default`.
    public var username: String?
    public var password: String?
    public var database: Int
    /// The name a TLS certificate must hold (`tls-server-name=`); nil: the
    /// host when it is a name, else an IP address SAN equal to the address dialled.
    public var tlsServerName: String?

    public init(
        host: String,
        port: Int = 6379,
        usesTLS: Bool = false,
        username: String? = nil,
        password: String? = nil,
        database: Int = 0
    ) {
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
        self.username = username
        self.password = password
        self.database = database
    }

    public init(url: String) throws(RedisClientError) {
        func invalid(_ why: String) -> RedisClientError {
            RedisClientError(.invalidURL, "invalid Redis URL (\(Self.redacted(url))): \(why)")
        }
        var rest = Substring(url)
        if rest.hasPrefix("redis://") {
            usesTLS = false
            rest = rest.dropFirst("redis://".count)
        } else if rest.hasPrefix("rediss://") {
            usesTLS = true
            rest = rest.dropFirst("rediss://".count)
        } else {
            throw invalid("it must start with redis:// or rediss://")
        }
        if rest.contains(where: { $0 == "?" || $0 == "#" }) {
            throw invalid("query strings and fragments are not supported")
        }
        let parts = try RedisAuthority(rest, invalid: invalid)
        let authority = parts.hosts
        database = parts.database
        switch parts.credentials {
        case .none:
            username = nil
            password = nil
        case .userAndPassword(let user, let secret):
            username = user
            password = secret
        case .lone(let secret):
            username = nil
            password = secret
        }
        // Host, then an optional port.
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("an IPv6 host lacks its ']'") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after the IPv6 host") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty else { throw invalid("no host") }
        guard host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "@") }) else {
            throw invalid("the host holds a character a host name cannot")
        }
        port = 6379
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let number = Int(portText), (1...65535).contains(number)
            else {
                throw invalid("the port must be a number from 1 to 65535")
            }
            port = number
        }
    }

    public var description: String {
        var text = usesTLS ? "rediss://" : "redis://"
        if username != nil || password != nil {
            text += (username ?? "") + (password != nil ? ":***" : "") + "@"
        }
        text += host.contains(":") ? "[\(host)]" : host
        text += ":\(port)"
        if database != 0 { text += "/\(database)" }
        return text
    }

    /// The URL as given with any password replaced, for error messages.
    static func redacted(_ url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://"),
            let at = url[schemeEnd.upperBound...].lastIndex(of: "@")
        else { return url }
        let credentials = url[schemeEnd.upperBound..<at]
        guard let colon = credentials.firstIndex(of: ":") else {
            return String(url[..<schemeEnd.upperBound]) + "***" + url[at...]
        }
        return String(url[..<colon]) + ":***" + url[at...]
    }

    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
