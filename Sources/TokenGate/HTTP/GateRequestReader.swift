import CDNTokens
import EntitlementTokens
import HTTPTypes

/// Turns one auth request into the ``GateRequest`` the decision judges: the
/// HTTP layer's whole share of the decision (docs/DESIGN.md#the-request-path).
///
/// It finds every credential and counts the field lines of every field that
/// must come once, but judges nothing: two readings are the decision's to
/// refuse, so that every proxy convention gets the same rule.
struct GateRequestReader: Sendable {
    let configuration: GateConfiguration
    private let resourceHeader: HTTPField.Name?
    private let deviceHeader: HTTPField.Name
    private let tokenHeader: HTTPField.Name?
    private let sessionHeader: HTTPField.Name
    /// With `--cat-key`: where a Common Access Token is read.
    private let readsCATs: Bool
    private let clientIPHeader: HTTPField.Name?
    /// The fields that must come on one line at most, with the one that
    /// carries the original URI for this endpoint first.
    private let singleFields: [HTTPField.Name]
    /// The query parameters read: the token's names, then the session's where sessions are issued.
    private let queryNames: [String]

    init(configuration: GateConfiguration) {
        self.configuration = configuration
        // Names were checked as RFC 9110 tokens by the configuration.
        if case .header(let name) = configuration.resource { resourceHeader = HTTPField.Name(name)! } else { resourceHeader = nil }
        deviceHeader = HTTPField.Name(configuration.deviceHeader)!
        tokenHeader = configuration.tokenHeader.map { HTTPField.Name($0)! }
        sessionHeader = HTTPField.Name(configuration.sessionHeader)!
        readsCATs = !configuration.catKeys.isEmpty
        clientIPHeader = configuration.clientIPHeader.map { HTTPField.Name($0)! }
        var single = [
            GateHeaders.originalURI, GateHeaders.forwardedURI, GateHeaders.forwardedProto, GateHeaders.cookiePath, deviceHeader, sessionHeader,
        ]
        if let resourceHeader { single.append(resourceHeader) }
        if let tokenHeader { single.append(tokenHeader) }
        if let clientIPHeader { single.append(clientIPHeader) }
        // What a CAT is judged by (catu, catm) must read one way too; without
        // CATs these fields go to the log only, as before.
        if readsCATs { single += [GateHeaders.commonAccessToken, GateHeaders.forwardedHost, GateHeaders.forwardedMethod] }
        singleFields = single
        queryNames =
            configuration.tokenParams + (configuration.sessionSecretPaths.isEmpty ? [] : [configuration.sessionParam])
            + (readsCATs ? [CATOrigin.parameterName] : [])
    }

    /// The request whose original URI (path and query as the client sent it)
    /// is `originalURI`, with `headers`, at `now`. `method` is the original
    /// request's when the endpoint sees it (Envoy checks any method); the
    /// others take `X-Forwarded-Method`.
    func read(originalURI: Substring?, headers: HTTPFields, now: TokenTimestamp, method: String? = nil) -> GateRequest {
        var request = GateRequest(now: now)
        for name in singleFields where CredentialLocator.fieldLineCount(name, in: headers) > 1 {
            request.doubledFields.append(name.rawName)
        }
        if let resourceHeader { request.resource = CredentialLocator.header(resourceHeader, in: headers).map(String.init) }
        request.deviceID = CredentialLocator.header(deviceHeader, in: headers).map(String.init)
        if CredentialLocator.fieldLineCount(GateHeaders.forwardedProto, in: headers) == 1 {
            request.forwardedProto = headers[GateHeaders.forwardedProto]
        }
        request.cookiePath = headers[GateHeaders.cookiePath]
        if let originalURI {
            request.originalPath = GateRoute.path(of: originalURI)
            do { request.scopePath = try RequestPath.read(originalURI.utf8) } catch { request.unreadablePath = error }
        }
        if let clientIPHeader { request.clientIP = CredentialLocator.header(clientIPHeader, in: headers).map(String.init) }

        // One pass over the query for every name read there: the token
        // parameters, then the session's.
        let queryValues = originalURI.map { CredentialLocator.parameters(queryNames, inURI: $0) }
        if let queryValues {
            for (name, values) in zip(configuration.tokenParams, queryValues) {
                for value in values { request.tokens.append(.init(value: value, carrier: .query(name))) }
            }
        }
        // An empty parameter is a second reading only beside another value
        // (`token=&token=x`); alone, it is no token.
        if request.tokens.allSatisfy({ $0.value.isEmpty }) { request.tokens = [] }
        if let tokenHeader, let value = CredentialLocator.header(tokenHeader, in: headers) {
            request.tokens.append(.init(value: value, carrier: .header(tokenHeader.rawName)))
        }
        if let name = configuration.tokenCookie {
            for value in CredentialLocator.cookies(name, in: headers) { request.tokens.append(.init(value: value, carrier: .cookie(name))) }
        }

        if readsCATs {
            request.originalURI = originalURI
            request.method = method ?? headers[GateHeaders.forwardedMethod]
            if CredentialLocator.fieldLineCount(GateHeaders.forwardedHost, in: headers) == 1 {
                request.forwardedHost = headers[GateHeaders.forwardedHost]
            }
            if let value = CredentialLocator.header(GateHeaders.commonAccessToken, in: headers) {
                request.cats.append(.init(value: value, carrier: .header(GateHeaders.commonAccessToken.rawName)))
            }
            for value in CredentialLocator.cookies(CATOrigin.cookieName, in: headers) {
                request.cats.append(.init(value: value, carrier: .cookie(CATOrigin.cookieName)))
            }
            for value in queryValues?.last ?? [] where !value.isEmpty {
                request.cats.append(.init(value: value, carrier: .query(CATOrigin.parameterName)))
            }
        }

        // Sessions are read only where the gate issues them.
        guard !configuration.sessionSecretPaths.isEmpty else { return request }
        for value in CredentialLocator.cookies(configuration.sessionCookie, in: headers) {
            request.sessions.append(.init(value: value, carrier: .cookie(configuration.sessionCookie)))
        }
        if let queryValues {
            for value in queryValues[configuration.tokenParams.count] where !value.isEmpty {
                request.sessions.append(.init(value: value, carrier: .query(configuration.sessionParam)))
            }
        }
        if let value = CredentialLocator.header(sessionHeader, in: headers) {
            request.sessions.append(.init(value: value, carrier: .header(sessionHeader.rawName)))
        }
        return request
    }
}
