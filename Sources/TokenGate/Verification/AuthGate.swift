import EntitlementTokens
import HTTPTypes

/// The decision of the auth endpoints, whatever the proxy convention: where
/// the credential is, which check applies, and what the answer is (SPEC §9,
/// §11). The HTTP layer only finds the original URI and renders the answer.
///
/// Order: a valid playback session lets the request through without a
/// token; otherwise a token decides; a session that failed and no token
/// answers the session's failure; nothing at all is `NO_TOKEN`.
final class AuthGate: Sendable {
    let configuration: GateConfiguration
    let verifier: GateVerifier
    let cache: VerdictCache
    let sessions: PlaybackSessions?
    let clock: @Sendable () -> TokenTimestamp
    private let resourceHeader: HTTPField.Name?
    private let deviceHeader: HTTPField.Name
    private let tokenHeader: HTTPField.Name?
    private let sessionHeader: HTTPField.Name

    init(configuration: GateConfiguration, verifier: GateVerifier, cache: VerdictCache, sessions: PlaybackSessions?,
         clock: @escaping @Sendable () -> TokenTimestamp) {
        self.configuration = configuration
        self.verifier = verifier
        self.cache = cache
        self.sessions = sessions
        self.clock = clock
        // Names were checked as RFC 9110 tokens by the configuration.
        if case .header(let name) = configuration.resource { resourceHeader = HTTPField.Name(name)! } else { resourceHeader = nil }
        deviceHeader = HTTPField.Name(configuration.deviceHeader)!
        tokenHeader = configuration.tokenHeader.map { HTTPField.Name($0)! }
        sessionHeader = HTTPField.Name(configuration.sessionHeader)!
    }

    /// Decides one request whose original URI (path and query, as the client
    /// sent it) is `originalURI`, with the request's headers.
    func decide(originalURI: Substring?, headers: HTTPFields) async -> GateAnswer {
        let resource: String?
        switch configuration.resource {
        case .fixed(let fixed): resource = fixed
        case .any: resource = nil
        case .header:
            guard let name = resourceHeader, let value = CredentialLocator.header(name, in: headers) else {
                return GateAnswer(status: .noExpectedResource,
                                  reason: "the request has no \(resourceHeader?.rawName ?? "resource") header: the proxy must set it for this location",
                                  kindLabel: "none")
            }
            resource = String(value)
        }
        let deviceID = CredentialLocator.header(deviceHeader, in: headers).map(String.init)

        var sessionFailure: GateAnswer? = nil
        if let sessions, let credential = sessionCredential(originalURI: originalURI, headers: headers) {
            switch sessions.check(credential.utf8, resource: resource, deviceID: deviceID, now: clock()) {
            case .valid(let expires):
                return GateAnswer(status: .validSession, reason: "valid playback session",
                                  allowance: Allowance(sessionFor: resource, requestor: configuration.requestorID, expires: expires),
                                  kindLabel: "session")
            case .expired:
                sessionFailure = GateAnswer(status: .sessionExpired, reason: "the playback session has expired", kindLabel: "session")
            case .invalid(let reason):
                sessionFailure = GateAnswer(status: .invalidSession, reason: reason, kindLabel: "session")
            }
        }

        guard let token = locateToken(originalURI: originalURI, headers: headers) else {
            return sessionFailure ?? GateAnswer(status: .noToken, reason: "the request carries no token", kindLabel: "none")
        }
        return await decide(token: token.utf8, resource: resource, deviceID: deviceID)
    }

    /// The token's verdict, from the cache when a reusable token was allowed before.
    func decide(token: Substring.UTF8View, resource: String?, deviceID: String?) async -> GateAnswer {
        var cacheKey: VerdictCache.Key? = nil
        if cache.isEnabled {
            let key = VerdictCache.key(token: token, resource: resource, deviceID: deviceID)
            if let hit = cache.lookup(key, now: clock()) {
                return GateAnswer(status: .verdict(.validToken), reason: "cached allow", allowance: hit.allowance,
                                  tokenID: hit.tokenID, kindLabel: hit.allowance.kind)
            }
            cacheKey = key
        }
        let verdict = await verifier.verdict(for: token, resource: resource, deviceID: deviceID)
        let tokenID = verdict.token.map { Digest.tokenID(signedBytes: $0.signedBytes) }
        let kindLabel = verdict.token?.kind.rawValue ?? "none"
        guard let verified = verdict.verified else {
            return GateAnswer(status: .verdict(verdict.status), reason: verdict.reason, tokenID: tokenID, kindLabel: kindLabel)
        }
        let allowance = Allowance(token: verified.token, expectedResource: resource)
        var session: String? = nil
        if verified.token.kind == .media {
            session = sessions?.issue(resource: resource, deviceID: deviceID, now: clock()).credential
        } else if let cacheKey, let tokenID {
            cache.insert(cacheKey, verdict: verified, allowance: allowance, tokenID: tokenID)
        }
        return GateAnswer(status: .verdict(.validToken), reason: verdict.reason, allowance: allowance, session: session,
                          tokenID: tokenID, kindLabel: kindLabel)
    }

    private func locateToken(originalURI: Substring?, headers: HTTPFields) -> Substring? {
        if let originalURI, let value = CredentialLocator.parameter(configuration.tokenParams, inURI: originalURI) { return value }
        if let tokenHeader, let value = CredentialLocator.header(tokenHeader, in: headers) { return value }
        if let name = configuration.tokenCookie, let value = CredentialLocator.cookie(name, in: headers) { return value }
        return nil
    }

    private func sessionCredential(originalURI: Substring?, headers: HTTPFields) -> Substring? {
        if let value = CredentialLocator.cookie(configuration.sessionCookie, in: headers) { return value }
        if let originalURI, let value = CredentialLocator.parameter(configuration.sessionParam, inURI: originalURI) { return value }
        return CredentialLocator.header(sessionHeader, in: headers)
    }
}
