/// What differs between two viewers of one manifest: where the gate's
/// manifest route is, the viewer's session, and the CDN token made for this
/// response (one token per response, for the scope's folder).
public struct ManifestViewer: Sendable {
    /// The gate's manifest route as an absolute path (`/v1/manifest`): a
    /// playlist URI is written `<gateRoute><resolved path>?<query>&tgs=<session>`.
    public var gateRoute: String
    /// The playback session, the value of `tgs` (base64url, so query-safe; the CLI writes `SESSION`).
    public var session: String
    /// The CDN token's query pairs, in the order they are written.
    public var token: [CDNField]

    public init(gateRoute: String, session: String, token: [CDNField]) {
        self.gateRoute = gateRoute
        self.session = session
        self.token = token
    }

    /// The token as a query: `name=value&…`, each part percent-escaped.
    public var tokenQuery: String {
        token.map { Self.queryEscaped($0.name) + "=" + Self.queryEscaped($0.value) }.joined(separator: "&")
    }

    /// `tgs=<session>`, escaped.
    public var sessionQuery: String { ManifestScope.sessionName + "=" + Self.queryEscaped(session) }

    /// `text` escaped for a query's name or value: everything but RFC 3986's
    /// unreserved bytes, the sub-delims no query reader splits on or decodes
    /// (`!`, `$`, `'`, `(`, `)`, `*`, `,`), and `/`, `:`, `@` and `=`, which a
    /// query may hold as they are (§3.4) and which EdgeAuth's fields carry
    /// (`acl=/hls/*`): an edge that does not decode a query value checks the
    /// bytes it was signed over. `&`, `+`, `;`, `#`, `%`, `"`, spaces and
    /// controls are escaped, so a value can never end its pair or the
    /// quoted attribute it is written in.
    public static func queryEscaped(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if RequestPath.isUnreserved(byte) || Self.keptAsIs(byte) {
                out.append(byte)
            } else {
                out.append(contentsOf: [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func keptAsIs(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"),
            UInt8(ascii: ","), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "="):
            return true
        default:
            return false
        }
    }
}
