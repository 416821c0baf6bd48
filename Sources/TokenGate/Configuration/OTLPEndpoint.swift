import EntitlementTokens

/// Where `--otlp-endpoint` sends spans: an OTLP/HTTP receiver's URL
/// (`http://HOST[:PORT][/PATH]`), as OpenTelemetry's
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` names it. Without a path the
/// specification's `/v1/traces` is used; without a port, OTLP/HTTP's 4318.
///
/// Plain HTTP only: the gate sends to a collector beside it (an
/// OpenTelemetry Collector on the same host or pod), which batches, retries
/// and speaks TLS to the backend; no credentials, query or fragment are taken,
/// so nothing secret sits in a URL that is logged (docs/DESIGN.md#span-export).
struct OTLPEndpoint: Sendable, Equatable, CustomStringConvertible {
    var host: String
    var port: Int
    var path: String

    static let defaultPort = 4318
    static let defaultPath = "/v1/traces"

    struct ParseError: Error, Sendable, CustomStringConvertible {
        let description: String
    }

    init(_ text: String) throws(ParseError) {
        func refuse(_ why: String) -> ParseError {
            ParseError(description: "--otlp-endpoint \(TerminalText.quoted(text)): \(why)")
        }
        guard text.hasPrefix("http://") else {
            throw text.hasPrefix("https://")
                ? refuse("https is not sent from the gate: send to a collector beside it over http (docs/DESIGN.md#span-export)")
                : refuse("expected http://HOST[:PORT][/PATH]")
        }
        let rest = text.dropFirst("http://".count)
        guard !rest.contains(where: { $0 == "?" || $0 == "#" }) else { throw refuse("a query or fragment is not taken") }
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        guard !authority.contains("@") else {
            // Not repeated: the error goes to a terminal and to logs, and the URL holds a password.
            throw ParseError(description: "--otlp-endpoint: credentials in the URL are not taken (the URL is not repeated here)")
        }
        guard path.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else { throw refuse("the path must be printable ASCII") }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refuse("an IPv6 address needs its closing ]") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refuse("expected :PORT after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else {
            let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
        }
        guard !host.isEmpty,
            host.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-.:".unicodeScalars.contains($0))
            })
        else {
            throw refuse("expected a host name or address")
        }
        var port = Self.defaultPort
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else { throw refuse("the port must be 1 to 65535") }
            port = number
        }
        self.host = String(host)
        self.port = port
        self.path = path.isEmpty || path == "/" ? Self.defaultPath : String(path)
    }

    /// The `Host` field: the name as given, with the port.
    var hostField: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    var description: String { "http://\(hostField)\(path)" }
}
