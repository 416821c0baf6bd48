import EntitlementTokens

/// The decision of the auth endpoints, whatever the proxy convention: a
/// ``GateRequest`` in, a ``GateDecision`` out (docs/DESIGN.md#the-request-path). The HTTP layer
/// only reads the request into that value and renders the answer.
///
/// Order (docs/DESIGN.md#the-valid-one-wins): (1) a request that reads two ways
/// is 400; (2) any valid session candidate lets the request through, and a
/// token beside it is not spent; (3) else a token decides as if no session had
/// been sent; (4) else the best candidate's failure (`SESSION_EXPIRED` before
/// `DEVICE_MISMATCH` before `INVALID_SESSION`); (5) else `NO_TOKEN`, naming
/// what was looked for.
///
/// A Common Access Token (docs/DESIGN.md#cat-at-the-origin) is a playback
/// credential like a session, judged after the sessions and before the
/// token: a valid session lets the request through without spending a
/// one-use CAT; a valid CAT lets it through without spending a media token;
/// a refused CAT leaves the decision to the token, and its refusal is the
/// answer only when no token came (before a session's failure: the CAT is
/// the credential the request was made with).
final class AuthGate: Sendable {
    let configuration: GateConfiguration
    let verifier: GateVerifier
    let cache: VerdictCache
    /// The session secrets, replaced as a whole by a reload; nil without `--session-secret`.
    let sessions: Reloaded<PlaybackSessions>?
    /// `--cat-key`: Common Access Tokens accepted; nil reads none.
    let cat: CATOrigin?
    let clock: @Sendable () -> TokenTimestamp
    let hooks: Hooks
    /// The configured requestor as sessions bind it, hashed once, not per session.
    let requestorBinding: PlaybackSessions.Binding

    /// Points where a test can hold a request, to make a race deterministic.
    struct Hooks: Sendable {
        /// Runs after a reusable token was verified and allowed, before its
        /// verdict is offered to the cache.
        var beforeCacheInsert: (@Sendable () async -> Void)? = nil
    }

    /// Session cookies considered per request (browsers send one per matching
    /// path); more is a 400, not a linear cost in HMACs.
    static let maximumSessionCookies = 8

    init(
        configuration: GateConfiguration,
        verifier: GateVerifier,
        cache: VerdictCache,
        sessions: Reloaded<PlaybackSessions>?,
        cat: CATOrigin? = nil,
        clock: @escaping @Sendable () -> TokenTimestamp,
        hooks: Hooks = Hooks()
    ) {
        self.configuration = configuration
        self.verifier = verifier
        self.cache = cache
        self.sessions = sessions
        self.cat = cat
        self.clock = clock
        self.hooks = hooks
        requestorBinding = PlaybackSessions.Binding(configuration.requestorID)
        lookedFor = Self.places(configuration, sessions: sessions != nil, cat: cat != nil)
    }

    /// Decides one request: the one decision of the auth routes, whatever
    /// the proxy convention. It runs to its end without waiting unless a
    /// token or a CAT must be verified and the replay store is asked
    /// (Redis); a playback session or a refusal before any verification
    /// never waits.
    func decide(_ request: GateRequest) async -> GateDecision {
        switch open(request) {
        case .decided(let answer): return answer
        case .verify(let pending): return await verify(request, pending)
        }
    }

    /// Where a request stands after the steps that never wait (1, 2, 4 and 5
    /// of the order above, and a CAT that asks nothing of the replay store):
    /// decided, or a token to verify or a CAT's `cti` to put to the store.
    private enum Opening {
        case decided(GateDecision)
        case verify(Pending)
    }

    /// What the steps that verify a token or a CAT carry on with.
    private struct Pending {
        let resource: String?
        let cookiePath: String
        /// One set of secrets for the whole request, though a reload may replace it meanwhile.
        let sessions: PlaybackSessions?
        let sessionFailure: GateDecision?
        /// A CAT refused before the token is verified (its refusal is the answer when no token decides).
        var catFailure: GateDecision? = nil
        /// A verified CAT whose `cti` the replay store must be asked about.
        var catReplayCheck: CATOrigin.ReplayCheck? = nil
    }

    private func open(_ request: GateRequest) -> Opening {
        if let ambiguity = ambiguity(of: request) {
            return .decided(GateDecision(status: .badRequest, reason: ambiguity, kindLabel: "none"))
        }
        if let refusal = request.unreadablePath {
            return .decided(GateDecision(status: .invalidRequest, reason: "the original URI: \(refusal.reason)", kindLabel: "none"))
        }
        let resource: String?
        switch configuration.resource {
        case .fixed(let fixed): resource = fixed
        case .any: resource = nil
        case .header(let name):
            guard let fromProxy = request.resource else {
                return .decided(
                    GateDecision(
                        status: .noExpectedResource,
                        reason: "the request has no \(name) header: the proxy must set it for this location",
                        kindLabel: "none"
                    )
                )
            }
            resource = fromProxy
        }

        var cookiePath = "/"
        if sessions != nil, let path = request.cookiePath {
            guard Self.isCookiePath(path, of: request.originalPath) else {
                return .decided(
                    GateDecision(
                        status: .badCookiePath,
                        reason: "X-Token-Cookie-Path is not a plain path prefix of the original URI's path: the site must send one",
                        kindLabel: "none"
                    )
                )
            }
            cookiePath = path
        }

        // One set of secrets for the whole request, though a reload may replace it meanwhile.
        let sessions = self.sessions?.current
        var sessionFailure: GateDecision? = nil
        if let sessions, !request.sessions.isEmpty {
            switch judge(
                sessions: request.sessions,
                with: sessions,
                resource: resource,
                deviceID: request.deviceID,
                allowsUnboundDevice: configuration.allowUnboundDevice,
                now: request.now
            ) {
            case .allowed(let answer, _, _): return .decided(answer)
            case .refused(let answer): sessionFailure = answer
            }
        }

        let readsCAT = cat != nil && !request.cats.isEmpty
        guard readsCAT || !request.tokens.isEmpty else { return .decided(noCredential(sessionFailure: sessionFailure)) }
        var pending = Pending(resource: resource, cookiePath: cookiePath, sessions: sessions, sessionFailure: sessionFailure)
        // A CAT is judged here, as a session is, unless the replay store must be asked.
        if let cat, let credential = request.cats.first {
            switch cat.judge(credential, request: request, resource: resource) {
            case .decided(let answer):
                if answer.status.isAllowed || request.tokens.isEmpty { return .decided(answer) }
                pending.catFailure = answer
            case .replayCheck(let check):
                pending.catReplayCheck = check
            }
        }
        return .verify(pending)
    }

    /// Steps 3 to 5 for a request that carries a token to verify, or a CAT
    /// whose `cti` the replay store must be asked about.
    private func verify(_ request: GateRequest, _ pending: Pending) async -> GateDecision {
        var catFailure = pending.catFailure
        if let cat, let check = pending.catReplayCheck {
            let answer = await cat.finish(check, request: request)
            if answer.status.isAllowed { return answer }
            catFailure = answer
        }

        guard let token = request.tokens.first else {
            return catFailure ?? noCredential(sessionFailure: pending.sessionFailure)
        }
        var answer = await judge(
            token: token.value.utf8,
            resource: pending.resource,
            deviceID: request.deviceID,
            now: request.now,
            sessions: pending.sessions
        )
        if let session = answer.session, let lifetime = pending.sessions?.lifetimeMilliseconds {
            answer.setCookie = setCookie(session, path: pending.cookiePath, maxAge: lifetime / 1000, secure: request.forwardedProto != "http")
        }
        return answer
    }

    /// A session judgement: the first valid candidate, else the best failure.
    enum SessionJudgement: Sendable {
        /// The decision, the candidate that carried it, and when that session ends.
        case allowed(GateDecision, credential: GateRequest.Credential, expires: TokenTimestamp)
        case refused(GateDecision)
    }

    /// Judges every session candidate of a request (step 2 and 4 of the
    /// order above), for the auth routes, the manifest route and renewal:
    /// any valid one allows; else `SESSION_EXPIRED` before `DEVICE_MISMATCH`
    /// before `INVALID_SESSION`.
    func judge(
        sessions candidates: [GateRequest.Credential],
        with sessions: PlaybackSessions,
        resource: String?,
        deviceID: String?,
        allowsUnboundDevice: Bool,
        now: TokenTimestamp
    ) -> SessionJudgement {
        let expectation = PlaybackSessions.Expectation(
            resource: resource,
            deviceID: deviceID,
            requestor: requestorBinding,
            allowsUnboundDevice: allowsUnboundDevice,
            now: now
        )
        let trusted = verifier.trustedKeyIDs
        var best: (rank: Int, answer: GateDecision)? = nil
        for candidate in candidates {
            let failure: (rank: Int, answer: GateDecision)
            switch sessions.check(candidate.value.utf8, against: expectation, trusts: { trusted.contains($0) }) {
            case .valid(let expires):
                return .allowed(
                    GateDecision(
                        status: .validSession,
                        reason: "valid playback session (\(candidate.carrier))",
                        allowance: Allowance(sessionFor: resource, requestor: configuration.requestorID, expires: expires),
                        kindLabel: "session"
                    ),
                    credential: candidate,
                    expires: expires
                )
            case .expired:
                failure = (
                    0, GateDecision(status: .sessionExpired, reason: "the playback session has expired (\(candidate.carrier))", kindLabel: "session")
                )
            case .deviceMismatch(let reason):
                failure = (1, GateDecision(status: .verdict(.deviceMismatch), reason: "\(reason) (\(candidate.carrier))", kindLabel: "session"))
            case .invalid(let reason):
                failure = (2, GateDecision(status: .invalidSession, reason: "\(reason) (\(candidate.carrier))", kindLabel: "session"))
            }
            if best == nil || failure.rank < best!.rank { best = failure }
        }
        return .refused(
            best?.answer
                ?? GateDecision(status: .noToken, reason: "the request carries no playback session", kindLabel: "none")
        )
    }

    /// No token and no CAT allowed the request: the best session failure, else `NO_TOKEN`.
    private func noCredential(sessionFailure: GateDecision?) -> GateDecision {
        sessionFailure
            ?? GateDecision(
                status: .noToken,
                reason: "the request carries no token and no session: looked for \(lookedFor)",
                kindLabel: "none"
            )
    }

    /// The `Set-Cookie` value of a new session (docs/DESIGN.md#the-session-cookie). `Secure` unless the
    /// proxy reported exactly one `X-Forwarded-Proto: http`: a missing or odd
    /// value keeps it, so an HTTPS site never leaks the credential to port 80.
    func setCookie(_ credential: String, path: String, maxAge: Int64, secure: Bool) -> String {
        // Written into one buffer sized once: an interpolation grows its string piece by piece, on every allow.
        let maxAge = String(maxAge)
        var cookie: [UInt8] = []
        cookie.reserveCapacity(configuration.sessionCookie.utf8.count + credential.utf8.count + path.utf8.count + maxAge.utf8.count + 48)
        cookie += configuration.sessionCookie.utf8
        cookie.append(UInt8(ascii: "="))
        cookie += credential.utf8
        cookie += "; Path=".utf8
        cookie += path.utf8
        cookie += "; Max-Age=".utf8
        cookie += maxAge.utf8
        cookie += "; HttpOnly; SameSite=Lax".utf8
        if secure { cookie += "; Secure".utf8 }
        return String(decoding: cookie, as: UTF8.self)
    }

    /// `/` plus RFC 3986 path characters, without `;`, `,`, `%` or controls,
    /// and a prefix of the request's path.
    static func isCookiePath(_ path: String, of originalPath: Substring) -> Bool {
        guard path.utf8.first == UInt8(ascii: "/") else { return false }
        let allowed = path.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            default: "/-._~!$&'()*+=:@".utf8.contains(byte)
            }
        }
        return allowed && originalPath.utf8.starts(with: path.utf8)
    }

    /// What the gate looks for, for the reason of `NO_TOKEN`: made once, not per refusal.
    let lookedFor: String

    private static func places(_ configuration: GateConfiguration, sessions: Bool, cat: Bool) -> String {
        var places = ["query parameter " + configuration.tokenParams.joined(separator: " or ")]
        if let header = configuration.tokenHeader { places.append("header \(header)") }
        if let cookie = configuration.tokenCookie { places.append("cookie \(cookie)") }
        if sessions {
            places.append(
                "session cookie \(configuration.sessionCookie), query parameter \(configuration.sessionParam) "
                    + "or header \(configuration.sessionHeader)"
            )
        }
        if cat {
            places.append(
                "Common Access Token in header \(CATOrigin.headerName), cookie \(CATOrigin.cookieName) or query parameter \(CATOrigin.parameterName)"
            )
        }
        return places.joined(separator: "; ")
    }

    /// Why the request reads two ways (docs/DESIGN.md#the-gates-reading-of-a-request), or nil when it reads one way.
    func ambiguity(of request: GateRequest) -> String? {
        if let field = request.doubledFields.first {
            return "the request has more than one \(field) field: it reads two ways"
        }
        if let first = request.tokens.first,
            let other = request.tokens.dropFirst().first(where: { !$0.value.utf8.elementsEqual(first.value.utf8) })
        {
            return "the request carries two different tokens (\(first.carrier), \(other.carrier)): it reads two ways"
        }
        if let first = request.cats.first,
            let other = request.cats.dropFirst().first(where: { !$0.value.utf8.elementsEqual(first.value.utf8) })
        {
            return "the request carries two different Common Access Tokens (\(first.carrier), \(other.carrier)): it reads two ways"
        }
        let parameters = request.sessions.filter { if case .query = $0.carrier { true } else { false } }
        if let first = parameters.first, parameters.dropFirst().contains(where: { !$0.value.utf8.elementsEqual(first.value.utf8) }) {
            return "the request carries two different session parameters (\(first.carrier)): it reads two ways"
        }
        let cookies = request.sessions.count { if case .cookie = $0.carrier { true } else { false } }
        if cookies > Self.maximumSessionCookies {
            return "the request carries \(cookies) session cookies; at most \(Self.maximumSessionCookies) are read"
        }
        return nil
    }

    /// The token's verdict at `now` (the request's one reading of the clock),
    /// from the cache when a reusable token was allowed before; an allowed
    /// media token opens a playback session when the gate has secrets.
    func judge(
        token: Substring.UTF8View,
        resource: String?,
        deviceID: String?,
        now: TokenTimestamp
    ) async -> GateDecision {
        await judge(token: token, resource: resource, deviceID: deviceID, now: now, sessions: sessions?.current)
    }

    /// As above, a session opened with `sessions` (the secrets the request read) when one is.
    private func judge(
        token: Substring.UTF8View,
        resource: String?,
        deviceID: String?,
        now: TokenTimestamp,
        sessions: PlaybackSessions?
    ) async -> GateDecision {
        var cacheKey: VerdictCache.Key? = nil
        // Read before the verifier reads its ring: a verdict made with a ring
        // that a reload replaced meanwhile is then refused by the cache.
        let (generation, cacheIsEmpty) = cache.generationAndEmptiness
        // An empty cache (a gate that sees media tokens only: they are never
        // kept) answers nothing, so the key waits for an allow worth keeping.
        if cache.isEnabled, !cacheIsEmpty {
            let key = VerdictCache.key(token: token, resource: resource, deviceID: deviceID)
            if let hit = cache.lookup(key, now: now) {
                return GateDecision(
                    status: .verdict(.validToken),
                    reason: "cached allow",
                    allowance: hit.allowance,
                    tokenID: hit.tokenID,
                    kindLabel: hit.allowance.kind
                )
            }
            cacheKey = key
        }
        let verdict = await verifier.verdict(for: token, resource: resource, deviceID: deviceID, now: now)
        if cache.isEnabled, verdict.token?.kind != .media { cache.countMiss() }
        // The log's token id is a prefix of the token's identity: the digest
        // the verifier made (signature check, replay key), hashed here only
        // when it made none (docs/DESIGN.md#one-of-each-per-request: one digest per token).
        let tokenID = verdict.token.map { token in
            verdict.identity.map { Digest.tokenID(digest: $0.digest) } ?? Digest.tokenID(signedBytes: token.signedBytes)
        }
        let kindLabel = verdict.token?.kind.rawValue ?? "none"
        guard let verified = verdict.verified else {
            return GateDecision(status: .verdict(verdict.status), reason: verdict.reason, tokenID: tokenID, kindLabel: kindLabel)
        }
        // docs/DESIGN.md#device-binding: a device-bound credential does not pass a request that
        // simply omits the device header (the library skips a check with no
        // expectation, as the CLI must).
        if deviceID == nil, verified.token.fingerprint != nil, !configuration.allowUnboundDevice {
            return GateDecision(
                status: .verdict(.deviceMismatch),
                reason: "the token is bound to a device; the request names none (\(configuration.deviceHeader))",
                tokenID: tokenID,
                kindLabel: kindLabel
            )
        }
        let allowance = Allowance(token: verified.token, expectedResource: resource)
        var session: String? = nil
        if verified.token.kind == .media {
            if let sessions, let key = verified.key {
                session =
                    sessions.issue(
                        resource: resource,
                        deviceID: deviceID,
                        requestor: requestorBinding,
                        keyID: PlaybackSessions.keyID(of: key),
                        now: now
                    ).credential
            }
        } else if cache.isEnabled, let tokenID {
            let key = cacheKey ?? VerdictCache.key(token: token, resource: resource, deviceID: deviceID)
            if let hold = hooks.beforeCacheInsert { await hold() }
            cache.insert(key, verdict: verified, allowance: allowance, tokenID: tokenID, generation: generation)
        }
        return GateDecision(
            status: .verdict(.validToken),
            reason: verdict.reason,
            allowance: allowance,
            session: session,
            tokenID: tokenID,
            kindLabel: kindLabel
        )
    }
}
