/// Issues signed tokens the way real servers do: for tests, samples, and
/// staging servers that need to exercise a playback gate without the vendor.
///
/// It writes the token element, signs exactly those bytes (the same rule the
/// verifier checks), and wraps them in the chosen signature form and encoding.
public struct MintRequest: Sendable {
    /// How the minted token is written.
    public enum Encoding: String, Sendable, CaseIterable {
        case raw, base64, base64url
    }

    /// Which kind of token to mint.
    public var kind: TokenKind
    /// `authToken` (default, what real servers send) or `shortAuthorizationToken` for media tokens.
    public var mediaRoot: MediaToken.Root = .authToken
    /// The requestor id.
    public var requestorID: String
    /// Required for media and authorization tokens; for authentication tokens
    /// it is written as one `simpleAuthorizedResource` when given.
    public var resourceID: String?
    /// The MVPD id.
    public var mvpdID: String?
    /// The proxy MVPD id (media tokens).
    public var proxyMvpdID: String?
    /// The session GUID (media) or authentication GUID: a fresh random one
    /// (``TokenMinter/randomGUID()``) unless set, as issuers write one per token —
    /// two tokens minted in the same millisecond must still differ, or a replay
    /// check would refuse the second. `nil` writes none. Authorization tokens
    /// carry no GUID.
    public var sessionGUID: String?
    /// Media tokens: lifetime from `issueTime`. Authentication/authorization
    /// tokens: their expiry is `issueTime + ttl`.
    public var ttlMilliseconds: Int64 = 420_000
    /// Media tokens carry it; for the other kinds it only anchors the expiry.
    public var issueTime: TokenTimestamp
    /// Lowercase hex device fingerprint (authentication and authorization tokens).
    public var fingerprint: String?
    /// Extra elements appended to the token, as (path below the root, text).
    public var extraFields: [(path: String, value: String)] = []
    /// Legacy (what servers send, the default) or closed signature block.
    public var signatureForm: TokenFrame.SignatureForm = .legacy
    /// Raw XML (the default), Base64 or Base64url.
    public var encoding: Encoding = .raw
    /// One field per line, indented, as people paste tokens; the signature
    /// covers those exact bytes, line breaks included.
    public var prettyPrinted = false

    /// A request with the fields every kind needs; the rest default.
    public init(kind: TokenKind, requestorID: String, resourceID: String? = nil, issueTime: TokenTimestamp) {
        self.kind = kind
        self.requestorID = requestorID
        self.resourceID = resourceID
        self.issueTime = issueTime
        self.sessionGUID = TokenMinter.randomGUID()
    }
}

/// Issues signed tokens: for tests, samples and staging servers.
public enum TokenMinter {
    /// The request would make a token that `verify` calls malformed.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What is wrong with the request.
        public var description: String
    }

    /// A fresh GUID in the UUID version 4 shape issuers use
    /// (`2d6c1e3a-1f8b-4c6e-9a6f-0c5d3b1e9f21`): 122 bits from the system's
    /// CSPRNG (`getrandom(2)` on Linux), so no one can predict the next
    /// token's GUID from the last.
    public static func randomGUID() -> String {
        var bytes = SystemRandom.bytes(16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4: random
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // the RFC 9562 variant
        let hex = ByteRules.lowercaseHex(bytes)
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            hex.utf8.dropFirst(range.lowerBound).prefix(range.count)
        }
        return groups.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "-")
    }

    /// The token element's XML for `request` (what gets signed).
    public static func element(for request: MintRequest) throws(Failure) -> String {
        func field(_ name: String, _ value: String?) -> String {
            guard let value else { return "" }
            return "<\(name)>\(escaped(value))</\(name)>"
        }
        guard let expiry = request.issueTime.adding(milliseconds: request.ttlMilliseconds), request.ttlMilliseconds >= 0 else {
            throw Failure(description: "issue time + ttl is outside years 0001…9999")
        }
        try checkValues(of: request)
        var body: [String]
        let root: String
        switch request.kind {
        case .media:
            guard let resource = request.resourceID else { throw Failure(description: "a media token needs a resource id") }
            root = request.mediaRoot.rawValue
            body = [
                field("sessionGUID", request.sessionGUID), field("requestorID", request.requestorID),
                field("resourceID", resource), field("ttl", String(request.ttlMilliseconds)),
                field("issueTime", request.issueTime.formatted(.dashedOffset)), field("mvpdId", request.mvpdID),
                field("proxyMvpdId", request.proxyMvpdID),
            ]
        case .authentication:
            root = AuthenticationToken.root
            body = [
                field("simpleTokenAuthenticationGuid", request.sessionGUID), field("simpleTokenRequestorID", request.requestorID),
                field("simpleTokenExpires", expiry.formatted(.slashedGMTOffset)), field("simpleTokenMsoID", request.mvpdID),
            ]
            if let fingerprint = request.fingerprint {
                body.append("<simpleTokenDeviceID>\(field("simpleTokenFingerprint", fingerprint))</simpleTokenDeviceID>")
            }
            if let resource = request.resourceID {
                body.append(
                    "<simpleAuthorizedResources><simpleAuthorizedResource simpleResourceID=\"\(escaped(resource))\"/></simpleAuthorizedResources>"
                )
            }
        case .authorization:
            guard let resource = request.resourceID else { throw Failure(description: "an authorization token needs a resource id") }
            root = AuthorizationToken.root
            body = [
                field("simpleTokenRequestorID", request.requestorID), field("simpleTokenResourceID", resource),
                field("simpleTokenTTL", expiry.formatted(.slashedGMTOffset)), field("simpleTokenMsoID", request.mvpdID),
            ]
            if let fingerprint = request.fingerprint {
                body.append("<simpleTokenDeviceID>\(field("simpleTokenFingerprint", fingerprint))</simpleTokenDeviceID>")
            }
        }
        for extra in request.extraFields {
            let names = extra.path.split(separator: "/").map(String.init)
            guard !names.isEmpty, names.allSatisfy(isName) else { throw Failure(description: "'\(extra.path)' is not an element path") }
            body.append(names.map { "<\($0)>" }.joined() + escaped(extra.value) + names.reversed().map { "</\($0)>" }.joined())
        }
        let parts = body.filter { !$0.isEmpty }
        if request.prettyPrinted {
            return "<\(root)>\n" + parts.map { "  " + $0 + "\n" }.joined() + "</\(root)>"
        }
        return "<\(root)>\(parts.joined())</\(root)>"
    }

    /// Refuses values a verifier would call malformed, naming the field:
    /// control characters, a fingerprint that is not lowercase hex of 32, 40
    /// or 64 digits, an extra field that is a known one (it would appear twice).
    private static func checkValues(of request: MintRequest) throws(Failure) {
        let values: [(String, String?)] =
            [
                ("requestor", request.requestorID), ("resource", request.resourceID),
                ("mvpd", request.mvpdID), ("proxy MVPD", request.proxyMvpdID),
                ("session GUID", request.sessionGUID), ("fingerprint", request.fingerprint),
            ]
            + request.extraFields.map { ("field '\($0.path)'", $0.value) }
        for case let (name, value?) in values where value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw Failure(description: "the \(name) holds a control character (\(TerminalText.quoted(value))): no token may carry one")
        }
        if let fingerprint = request.fingerprint {
            let hex = fingerprint.utf8.allSatisfy { $0.isASCIIDigit || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
            guard hex, [32, 40, 64].contains(fingerprint.utf8.count) else {
                throw Failure(description: "the fingerprint must be lowercase hex of 32, 40 or 64 digits, got \(TerminalText.quoted(fingerprint))")
            }
        }
        let known: [String] =
            switch request.kind {
            case .media: MediaToken.knownPaths
            case .authentication: AuthenticationToken.knownPaths + ["simpleAuthorizedResources"]
            case .authorization: AuthorizationToken.knownPaths
            }
        for extra in request.extraFields {
            let first = extra.path.split(separator: "/").first.map(String.init) ?? extra.path
            if known.contains(where: { $0 == extra.path || $0.split(separator: "/").first.map(String.init) == first }) {
                throw Failure(
                    description:
                        "'\(TerminalText.escaped(extra.path))' is a known field of \(request.kind.rawValue) tokens; extra fields are for unknown elements"
                )
            }
        }
    }

    /// A signed token in the requested form and encoding.
    ///
    /// Never one that ``TokenDecoder`` would refuse: the token is decoded
    /// before it is returned, and a token that does not decode is a failure.
    public static func mint(_ request: MintRequest, key: SigningKey) throws -> String {
        let element = try element(for: request)
        let signature = Base64.encode(try key.signature(for: Array(element.utf8)))
        let xml: String
        // Pretty-printed, the element starts on its own line; the legacy
        // terminator stays on the first line, with the block it ends (a stream
        // would read it on a line of its own too, the block being open then).
        let separator = request.prettyPrinted ? "\n" : ""
        switch request.signatureForm {
        case .legacy: xml = "<signatureInfo>\(signature)<signatureInfo>\(separator)\(element)"
        case .closed: xml = "<signatureInfo>\(signature)</signatureInfo>\(separator)\(element)"
        }
        do {
            _ = try TokenDecoder().decode(xml)
        } catch {
            throw Failure(description: "the token would not decode: \(error.message)")
        }
        switch request.encoding {
        case .raw: return xml
        case .base64: return Base64.encode(Array(xml.utf8))
        case .base64url: return Base64.encode(Array(xml.utf8), alphabet: .url, padded: false)
        }
    }

    /// Text for an element: markup-looking values (a Media RSS document) go in
    /// CDATA, with any `]]>` split the way issuers do; others are escaped.
    static func escaped(_ value: String) -> String {
        if value.contains("<") {
            // Each `]]>` inside is split across two sections: `]]` ends one, `>` opens the next.
            return "<![CDATA["
                + value.split(separator: "]]>", omittingEmptySubsequences: false)
                .joined(separator: "]]]]><![CDATA[>") + "]]>"
        }
        var result = ""
        for character in value {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }

    private static func isName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first.isASCIILetter || first == UInt8(ascii: "_") else { return false }
        return name.utf8.allSatisfy {
            $0.isASCIILetter || $0.isASCIIDigit || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
        }
    }
}
