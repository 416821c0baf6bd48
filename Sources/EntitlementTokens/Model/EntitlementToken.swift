/// Which of the three token families a token belongs to.
public enum TokenKind: String, Sendable, Hashable, CaseIterable {
    case media, authentication, authorization
}

/// Any decoded token, with the accessors that mean the same for every kind
/// (docs/DESIGN.md#output-forms: `requestorID`, `resourceID`, `mvpdID`, `expiresAt`, `fingerprint`).
public enum EntitlementToken: Sendable, Hashable {
    case media(MediaToken)
    case authentication(AuthenticationToken)
    case authorization(AuthorizationToken)

    static let roots: Set<String> = Set(MediaToken.Root.allCases.map(\.rawValue) + [AuthenticationToken.root, AuthorizationToken.root])

    /// Builds the typed token for the parsed root; the parser already refused unknown roots.
    init(root: String, fields: [TokenField]) throws(TokenError) {
        // Each root name compared directly (the parser hands over the very
        // string of its table of roots): cheaper than `MediaToken.Root(rawValue:)`'s
        // string switch (docs/PERFORMANCE.md).
        switch root {
        case MediaToken.Root.authToken.rawValue:
            self = .media(try MediaToken(root: .authToken, fields: fields))
        case MediaToken.Root.shortAuthorizationToken.rawValue:
            self = .media(try MediaToken(root: .shortAuthorizationToken, fields: fields))
        case AuthenticationToken.root:
            self = .authentication(try AuthenticationToken(fields: fields))
        case AuthorizationToken.root:
            self = .authorization(try AuthorizationToken(fields: fields))
        default:
            throw TokenError(.unknownTokenRoot, stage: .model, "<\(root)> is not a token element")
        }
    }

    /// Media, authentication or authorization.
    public var kind: TokenKind {
        switch self {
        case .media: .media
        case .authentication: .authentication
        case .authorization: .authorization
        }
    }

    /// The root element name as written.
    public var root: String {
        switch self {
        case .media(let token): token.root.rawValue
        case .authentication: AuthenticationToken.root
        case .authorization: AuthorizationToken.root
        }
    }

    /// The requestor, the same meaning for every kind.
    public var requestorID: String {
        switch self {
        case .media(let token): token.requestorID
        case .authentication(let token): token.requestorID
        case .authorization(let token): token.requestorID
        }
    }

    /// Nil for authentication tokens, which name no single resource.
    public var resourceID: String? {
        switch self {
        case .media(let token): token.resourceID
        case .authentication: nil
        case .authorization(let token): token.resourceID
        }
    }

    /// The MVPD (`mvpdId` / `simpleTokenMsoID`).
    public var mvpdID: String? {
        switch self {
        case .media(let token): token.mvpdID
        case .authentication(let token): token.mvpdID
        case .authorization(let token): token.mvpdID
        }
    }

    /// The device fingerprint (authentication and authorization tokens).
    public var fingerprint: String? {
        switch self {
        case .media: nil
        case .authentication(let token): token.fingerprint
        case .authorization(let token): token.fingerprint
        }
    }

    /// Only media tokens carry an issue time.
    public var issuedAt: TokenTimestamp? {
        if case .media(let token) = self { return token.issueTime }
        return nil
    }

    /// When the token expires: `issueTime`+`ttl`, `simpleTokenExpires` or `simpleTokenTTL`.
    public var expiresAt: TokenTimestamp {
        switch self {
        case .media(let token): token.expiry
        case .authentication(let token): token.expires
        case .authorization(let token): token.expires
        }
    }
}
