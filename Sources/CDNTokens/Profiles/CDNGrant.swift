/// What a profile hands a verified viewer: the URL the player opens, the
/// cookies (cookie carrier), the headers (header carrier), and when it all
/// stops working. The exchange (`POST`/`GET /v1/playback`) answers with
/// it, and `tokeninspect mint cdn` prints it one item a line.
public struct CDNGrant: Sendable, Hashable {
    public var profile: String
    public var kind: CDNTokenKind
    /// The URL the player opens (with the token in its query for the query carrier).
    public var url: String
    /// Seconds since 1970.
    public var expires: Int64
    public var cookies: [CDNCookie]
    public var headers: [CDNField]

    public init(profile: String, kind: CDNTokenKind, url: String, expires: Int64, cookies: [CDNCookie], headers: [CDNField]) {
        self.profile = profile
        self.kind = kind
        self.url = url
        self.expires = expires
        self.cookies = cookies
        self.headers = headers
    }

    /// One item a line: the URL, each cookie as `Set-Cookie: …`, each header as `Name: value`.
    public var lines: [String] {
        [url] + cookies.map { "Set-Cookie: \($0.setCookieValue)" } + headers.map { "\($0.name): \($0.value)" }
    }
}

/// A cookie a CDN edge checks: `Secure` when the URL it is for is `https`
/// (whatever the request to the gate was), always `HttpOnly`, `Path` the
/// scope's folder, `Max-Age` the lifetime.
public struct CDNCookie: Sendable, Hashable {
    public var name: String
    public var value: String
    public var domain: String
    public var path: String
    public var maxAge: Int64
    public var secure: Bool
    public var httpOnly: Bool
    /// `Lax` or `None`.
    public var sameSite: String

    public init(name: String, value: String, domain: String, path: String, maxAge: Int64, secure: Bool, httpOnly: Bool = true, sameSite: String) {
        self.name = name
        self.value = value
        self.domain = domain
        self.path = path
        self.maxAge = maxAge
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
    }

    /// The `Set-Cookie` field value (RFC 6265 §4.1).
    public var setCookieValue: String {
        // Written into one buffer of its final size: every cookie exchange
        // writes this field (secure_link's two), and a string grows and
        // checks itself on every append.
        let maxAge = String(maxAge)
        var text: [UInt8] = []
        text.reserveCapacity(name.utf8.count + value.utf8.count + domain.utf8.count + path.utf8.count + sameSite.utf8.count + 72)
        text += name.utf8
        text.append(UInt8(ascii: "="))
        text += value.utf8
        text += "; Domain=".utf8
        text += domain.utf8
        text += "; Path=".utf8
        text += path.utf8
        text += "; Max-Age=".utf8
        text += maxAge.utf8
        if secure { text += "; Secure".utf8 }
        if httpOnly { text += "; HttpOnly".utf8 }
        text += "; SameSite=".utf8
        text += sameSite.utf8
        return String(decoding: text, as: UTF8.self)
    }
}
