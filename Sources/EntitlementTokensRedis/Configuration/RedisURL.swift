internal import EntitlementTokens
internal import FoundationEssentials
public import RedisRESP

/// How the client finds the node to write to (docs/DESIGN.md#high-availability).
public enum RedisTopology: Sendable, Hashable {
    /// The endpoint's address.
    case standalone
    /// Ask the sentinels where the primary named `primaryName` is; confirm with `ROLE`.
    case sentinel(RedisSentinelSettings)
    /// Route each key to its hash slot's primary; the topology comes from these seed nodes.
    case cluster(seeds: [RedisNodeAddress])

    /// "standalone", "sentinel" or "cluster", for logs.
    public var modeName: String {
        switch self {
        case .standalone: "standalone"
        case .sentinel: "sentinel"
        case .cluster: "cluster"
        }
    }
}

/// The sentinels and how to log in to them: their credentials are separate
/// from the data nodes' (a sentinel is configured with its own
/// `requirepass` / ACL users).
public struct RedisSentinelSettings: Sendable, Hashable {
    public var sentinels: [RedisNodeAddress]
    public var primaryName: String
    public var username: String?
    public var password: String?

    public init(sentinels: [RedisNodeAddress], primaryName: String, username: String? = nil, password: String? = nil) {
        self.sentinels = sentinels
        self.primaryName = primaryName
        self.username = username
        self.password = password
    }
}

/// The URL forms of docs/DESIGN.md#high-availability, parsed into an endpoint (the data nodes' login,
/// TLS and database, and in standalone mode their address) and a topology.
///
/// ```
/// redis://[[user]:password@]host[:port][/db][?params]                 rediss://…  (TLS)
/// redis-sentinel://[[user]:password@]host[:port][,host[:port]…][/db][?params]#primaryName
/// redis-cluster://[[user]:password@]host[:port][,host[:port]…][?params]
/// ```
///
/// The user and password in the authority are the data nodes'; a lone
/// `name@` is the password (Lettuce's form), or the user when
/// `password-file=` gives the password. Parameters:
/// `password-file=` (the data nodes' password, read from a file),
/// `sentinel-password-file=`, `sentinel-user=`, `sentinel-password=` (the
/// sentinels' login; inline only for the library, the gate takes files),
/// `tls-server-name=` (the name every node's certificate must hold; without
/// it, an IP address SAN equal to the address dialled), `tls-ca-file=` (PEM CA
/// certificates every node's certificate must chain to, instead of the
/// system's store: how a gate trusts a private CA). Ports default to 6379,
/// and to 26379 for sentinels. Every error hides passwords.
enum RedisURL {
    struct Parsed {
        var endpoint: RedisEndpoint
        var topology: RedisTopology
        var passwordFile: String?
        var sentinelPasswordFile: String?
        var caFile: String?
    }

    static let schemes: [(prefix: String, tls: Bool, mode: String)] = [
        ("redis://", false, "standalone"), ("rediss://", true, "standalone"),
        ("redis-sentinel://", false, "sentinel"), ("rediss-sentinel://", true, "sentinel"),
        ("redis-cluster://", false, "cluster"), ("rediss-cluster://", true, "cluster"),
    ]

    static func parse(_ url: String) throws(RedisClientError) -> Parsed {
        func invalid(_ why: String) -> RedisClientError {
            RedisClientError(.invalidURL, "invalid Redis URL (\(redacted(url))): \(why)")
        }
        guard let scheme = schemes.first(where: { url.hasPrefix($0.prefix) }) else {
            throw invalid("it must start with redis://, rediss://, redis-sentinel://, rediss-sentinel://, redis-cluster:// or rediss-cluster://")
        }
        var rest = Substring(url).dropFirst(scheme.prefix.count)
        // Fragment (sentinel's primary name), then query, then path.
        var fragment: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        var query: Substring?
        if let question = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        let parts = try RedisAuthority(rest, invalid: invalid)
        let authority = parts.hosts
        let database = parts.database
        var username: String?
        var password: String?
        /// `user@` alone: a password (Lettuce's `redis://password@host`), or
        /// the user when `password-file=` gives the password.
        var loneCredential: String?
        switch parts.credentials {
        case .none: break
        case .userAndPassword(let user, let secret):
            username = user
            password = secret
        case .lone(let secret):
            loneCredential = secret
        }
        let defaultPort = scheme.mode == "sentinel" ? 26379 : 6379
        var addresses: [RedisNodeAddress] = []
        for part in authority.split(separator: ",", omittingEmptySubsequences: false) {
            addresses.append(try address(part, defaultPort: defaultPort, invalid: invalid))
        }
        guard addresses.count <= 64 else { throw invalid("more than 64 addresses") }
        guard Set(addresses).count == addresses.count else { throw invalid("an address is named twice") }

        var parameters: [String: String] = [:]
        if let query, !query.isEmpty {
            for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
                guard let equals = pair.firstIndex(of: "=") else { throw invalid("a parameter without '='") }
                let name = String(pair[..<equals])
                guard
                    ["password-file", "sentinel-password-file", "sentinel-user", "sentinel-password", "tls-server-name", "tls-ca-file"].contains(name)
                else {
                    throw invalid(
                        "unknown parameter '\(TerminalText.escaped(name))' (known: password-file, sentinel-password-file, sentinel-user, sentinel-password, tls-server-name, tls-ca-file)"
                    )
                }
                guard let value = RedisEndpoint.percentDecoded(pair[pair.index(after: equals)...]), !value.isEmpty else {
                    throw invalid("the parameter \(name) is empty or has a malformed percent escape")
                }
                guard parameters.updateValue(value, forKey: name) == nil else { throw invalid("the parameter \(name) is given twice") }
            }
        }
        if let loneCredential {
            if parameters["password-file"] != nil, !loneCredential.isEmpty {
                username = loneCredential
            } else {
                password = loneCredential
            }
        }
        if parameters["password-file"] != nil, password != nil {
            throw invalid("a password both in the URL and in password-file")
        }
        if parameters["sentinel-password-file"] != nil, parameters["sentinel-password"] != nil {
            throw invalid("both sentinel-password and sentinel-password-file")
        }
        if let name = parameters["tls-server-name"] {
            guard scheme.tls else { throw invalid("tls-server-name is for the TLS forms (rediss…://)") }
            guard RedisNodeAddress.isPlausibleHost(name) else { throw invalid("tls-server-name is not a host name") }
        }
        if parameters["tls-ca-file"] != nil, !scheme.tls {
            throw invalid("tls-ca-file is for the TLS forms (rediss…://)")
        }

        var endpoint = RedisEndpoint(
            host: addresses[0].host,
            port: addresses[0].port,
            usesTLS: scheme.tls,
            username: username,
            password: password,
            database: database
        )
        endpoint.tlsServerName = parameters["tls-server-name"]
        let topology: RedisTopology
        switch scheme.mode {
        case "sentinel":
            guard let fragment, !fragment.isEmpty, let name = RedisEndpoint.percentDecoded(fragment),
                !name.isEmpty, name.utf8.count <= 256, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
            else {
                throw invalid("a sentinel URL ends with #primaryName (printable, no spaces), as in redis-sentinel://h:26379#mymaster")
            }
            topology = .sentinel(
                RedisSentinelSettings(
                    sentinels: addresses,
                    primaryName: name,
                    username: parameters["sentinel-user"],
                    password: parameters["sentinel-password"]
                )
            )
        case "cluster":
            guard fragment == nil else { throw invalid("a cluster URL has no #fragment") }
            guard database == 0 else { throw invalid("Redis Cluster has database 0 only") }
            topology = .cluster(seeds: addresses)
        default:
            guard fragment == nil else { throw invalid("#primaryName is for redis-sentinel:// URLs") }
            guard addresses.count == 1 else { throw invalid("several addresses are for redis-sentinel:// or redis-cluster:// URLs") }
            topology = .standalone
        }
        if case .sentinel = topology {
        } else {
            guard parameters["sentinel-password-file"] == nil, parameters["sentinel-password"] == nil,
                parameters["sentinel-user"] == nil
            else {
                throw invalid("sentinel-… parameters are for redis-sentinel:// URLs")
            }
        }
        return Parsed(
            endpoint: endpoint,
            topology: topology,
            passwordFile: parameters["password-file"],
            sentinelPasswordFile: parameters["sentinel-password-file"],
            caFile: parameters["tls-ca-file"]
        )
    }

    private static func address(
        _ text: Substring,
        defaultPort: Int,
        invalid: (String) -> RedisClientError
    ) throws(RedisClientError) -> RedisNodeAddress {
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw invalid("an IPv6 host lacks its ']'") }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after the IPv6 host") }
                portText = after.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            host = text
        }
        guard !host.isEmpty else { throw invalid("no host") }
        var port = defaultPort
        if let portText {
            guard let number = Int(decimal: String(portText)), (1...65535).contains(number) else {
                throw invalid("the port must be a number from 1 to 65535")
            }
            port = number
        }
        guard let address = RedisNodeAddress(host: String(host), port: port) else {
            throw invalid("the host holds a character a host name cannot")
        }
        return address
    }

    /// The URL with the password in the authority and any `sentinel-password=` value replaced.
    static func redacted(_ url: String) -> String {
        var text = RedisEndpoint.redacted(url)
        var searchFrom = text.startIndex
        while let range = text[searchFrom...].firstRange(of: "sentinel-password=") {
            let end = text[range.upperBound...].firstIndex(where: { $0 == "&" || $0 == "#" }) ?? text.endIndex
            text.replaceSubrange(range.upperBound..<end, with: "***")
            searchFrom = text.index(range.upperBound, offsetBy: 3)
        }
        return TerminalText.escaped(text)
    }

    /// A parameter's file: absolute as given, relative under `credentialsDirectory`.
    static func resolve(_ path: String, parameter: String, credentialsDirectory: String?) throws(RedisClientError) -> String {
        if path.hasPrefix("/") { return path }
        guard let directory = credentialsDirectory else {
            throw RedisClientError(.invalidConfiguration, "\(parameter)=\(TerminalText.escaped(path)): a relative path needs $CREDENTIALS_DIRECTORY")
        }
        return directory + "/" + path
    }

    /// Reads a secret file by the rule of docs/DESIGN.md#secret-files: a relative path resolves under
    /// `credentialsDirectory` (systemd's `$CREDENTIALS_DIRECTORY`); a regular
    /// file of at most 4 KiB; text (printable ASCII) loses one trailing newline.
    static func readSecret(_ path: String, parameter: String, credentialsDirectory: String?) throws(RedisClientError) -> String {
        let resolved = try resolve(path, parameter: parameter, credentialsDirectory: credentialsDirectory)
        let type = (try? FileManager.default.attributesOfItem(atPath: resolved))?[.type] as? FileAttributeType
        guard type == .typeRegular, let data = FileManager.default.contents(atPath: resolved), data.count <= 4096 else {
            throw RedisClientError(
                .invalidConfiguration,
                "\(parameter)=\(TerminalText.escaped(resolved)): not a readable regular file of at most 4 KiB"
            )
        }
        var body = [UInt8](data)[...]
        if body.last == 0x0A {
            body = body.dropLast()
            if body.last == 0x0D { body = body.dropLast() }
        }
        let isText = !body.isEmpty && body.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        let bytes = isText ? Array(body) : [UInt8](data)
        guard let secret = String(validating: bytes, as: UTF8.self), !secret.isEmpty else {
            throw RedisClientError(.invalidConfiguration, "\(parameter)=\(TerminalText.escaped(resolved)): the password must be UTF-8 text")
        }
        return secret
    }
}
