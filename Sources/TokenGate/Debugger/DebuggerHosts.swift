import HTTPTypes
import Hummingbird
import Synchronization

/// The names the debugger answers to (docs/DESIGN.md#the-web-debugger): `localhost`,
/// `127.0.0.1`, `[::1]`, the listen host and, behind the insecure door, each
/// `--allowed-host` — each with no port or the port the server listens on,
/// compared case-insensitively.
///
/// Listening on loopback does not stop a web page from reaching the debugger:
/// DNS rebinding points the page's own name at 127.0.0.1, and the browser then
/// sends `Host: evil.example` to it as same-origin. Refusing every other name
/// (421, no body) leaves such a page nothing to read. A request with no `Host`,
/// or two, names no one and is refused too. Only the debugger's routes check:
/// the gate's own routes answer whatever name nginx sends as its upstream's.
final class DebuggerHosts: Sendable {
    /// `Host` as a field name: HTTPTypes spells it only as the authority.
    static let hostName = HTTPField.Name("Host")!

    /// Lower-cased, IPv6 literals in brackets as a `Host` writes them.
    let names: Set<String>
    /// The port the server listens on: the configured one until the server
    /// has bound (an operator or a test may ask for port 0, any free port).
    private let port: Atomic<Int>

    init(listenHost: String, port: Int, allowedHosts: [String] = []) {
        let listen = listenHost.contains(":") ? "[\(listenHost)]" : listenHost
        names = Set((["localhost", "127.0.0.1", "[::1]", listen] + allowedHosts).map { $0.lowercased() })
        self.port = Atomic(port)
    }

    /// Records the port actually bound.
    func bound(port: Int?) {
        if let port, port != 0 { self.port.store(port, ordering: .relaxed) }
    }

    /// Whether `request` names this server: exactly one `Host` (HTTP/1's
    /// first `Host` arrives as the authority, any further one as a field).
    func allows(_ request: Request) -> Bool {
        guard let authority = request.head.authority, request.headers[values: Self.hostName].isEmpty else { return false }
        return allows(authority: authority)
    }

    func allows(authority: String) -> Bool {
        let name: Substring
        let portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            name = authority[...close]
            let rest = authority[authority.index(after: close)...]
            if rest.isEmpty {
                portText = nil
            } else {
                guard rest.first == ":" else { return false }
                portText = rest.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            name = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            name = authority[...]
            portText = nil
        }
        guard names.contains(name.lowercased()) else { return false }
        guard let portText else { return true }
        guard !portText.isEmpty, portText.utf8.count <= 5, portText.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let number = Int(portText)
        else { return false }
        return number == port.load(ordering: .relaxed)
    }

    /// 421 Misdirected Request with no body: nothing for a rebound page to read.
    static var refusal: Response {
        var headers = DebuggerHeaders.fields(contentType: "text/plain; charset=utf-8")
        headers[.contentType] = nil
        headers[.contentLength] = "0"
        return Response(status: .misdirectedRequest, headers: headers)
    }

    /// An `--allowed-host` value: a DNS name or IPv4 address (letters, digits,
    /// '-' and '.', labels of 1 to 63, at most 253), or an IPv6 literal in
    /// brackets; no port (the listen port applies) and nothing else.
    static func isHostName(_ text: String) -> Bool {
        if text.hasPrefix("["), text.hasSuffix("]"), text.utf8.count > 2 {
            return text.utf8.dropFirst().dropLast().allSatisfy { byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
                    || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
            }
        }
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { byte in
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                        || byte == UInt8(ascii: "-")
                }
        }
    }
}
