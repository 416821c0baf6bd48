import CDNTokens
import EntitlementTokens

/// Common Access Tokens at the origin (docs/DESIGN.md#cat-at-the-origin):
/// with `--cat-key`, the auth endpoints let a segment request through on a
/// CAT the way they do on a playback session. The library judges the MAC or
/// signature and the claims (``UnverifiedCommonAccessToken/verify(keys:facts:expectedIssuer:expectedAudience:)``);
/// this type gives it the request's facts as the proxy reported them and
/// enforces `catreplay` through the gate's replay store, which the library
/// only reads.
struct CATOrigin: Sendable {
    /// `--cat-key`'s keys and the CATs they authenticated, replaced as a whole by a reload.
    let keys: Reloaded<CATKeySet>
    /// `--cat-issuer`: the `iss` every CAT must carry (nil: any).
    let issuer: String?
    /// `--cat-audience`: the `aud` a CAT must name (nil: a CAT with an `aud` is refused).
    var audience: String? = nil
    /// The gate's `--leeway`, in whole seconds (CWT times are seconds).
    let leewaySeconds: Int64
    /// The gate's replay store as media tokens use it (deadline, metrics,
    /// `--replay-failure`); nil with `--replay off`.
    let replayStore: (any ReplayStore)?
    let replayDeadline: Duration

    /// Where a CAT is carried; CTA-5007's names, fixed.
    static let headerName = CDNProfile.catHeader
    static let cookieName = "cat"
    static let parameterName = "cat"

    /// The kind of an allow (`X-Token-Kind`) and of the verdict metric.
    static let kindLabel = "cat"

    /// A CAT's decision as far as it goes without waiting: ``judge(_:request:resource:)``,
    /// then ``finish(_:request:)`` when the replay store must be asked.
    enum Judgement: Sendable {
        case decided(GateDecision)
        /// Verified, with a `cti` the replay store must be asked about.
        case replayCheck(ReplayCheck)
    }

    /// A verified CAT whose `catreplay` asks the replay store.
    struct ReplayCheck: Sendable {
        /// The allow, before the store's answer and any renewal.
        let answer: GateDecision
        let verified: VerifiedCommonAccessToken
        let store: any ReplayStore
        let cti: [UInt8]
        let expires: Int64
        /// `catreplay` 1 (the store's "replayed" refuses) rather than 2 (it only marks the allow).
        let oneUse: Bool
        let carrier: GateRequest.Carrier
        let tokenID: String
    }

    /// The decision on one CAT for `request`, whose expected resource is
    /// `resource` (named in the allow; a CAT binds URLs, through `catu`, not
    /// resources), as far as it goes without waiting: the MAC or signature
    /// (or the reading kept for this text), the claims against the request,
    /// and `catreplay`. A CAT that asks nothing of the replay store, and
    /// every refusal, is decided here, as a playback session is, without
    /// leaving the request's task.
    func judge(_ credential: GateRequest.Credential, request: GateRequest, resource: String?) -> Judgement {
        let text = String(credential.value)
        let digest = Digest.sha256(text.utf8)
        let tokenID = Digest.tokenID(digest: digest.bytes)
        func refuse(_ status: GateStatus, _ reason: String) -> Judgement {
            .decided(Self.refusal(status, reason, carrier: credential.carrier, tokenID: tokenID))
        }
        let now = Self.seconds(request.now)
        // The key first, as the library's verify does: nothing of a CAT is judged before it is authenticated.
        let keySet = keys.current
        let readingKey = CATReadings.Key(digest)
        let authenticated: AuthenticatedCommonAccessToken
        if let kept = keySet.readings.lookup(readingKey, now: now, leeway: leewaySeconds) {
            authenticated = kept
        } else {
            do { authenticated = try UnverifiedCommonAccessToken(text: text).authenticated(by: keySet.keys) } catch {
                return refuse(Self.status(of: error.status), error.reason)
            }
            keySet.readings.insert(readingKey, authenticated, textBytes: text.utf8.count)
        }
        var facts = CDNRequestFacts(
            now: now,
            clientIP: request.clientIP,
            method: request.method ?? "GET",
            leeway: leewaySeconds
        )
        if let restriction = authenticated.token.uriRestriction {
            switch Self.url(judgedBy: restriction, request: request) {
            case .success(let url): facts.url = url
            case .failure(let refusal): return refuse(Self.status(of: refusal.status), refusal.reason)
            }
        }
        let verified: VerifiedCommonAccessToken
        do { verified = try authenticated.verify(facts: facts, expectedIssuer: issuer, expectedAudience: audience) } catch {
            return refuse(Self.status(of: error.status), error.reason)
        }
        // No exp: the CAT does not expire, and the allow says so with the latest time there is.
        let expires = verified.token.expires.map { Self.until($0, leeway: 0) } ?? .latest
        let answer = GateDecision(
            status: .verdict(.validToken),
            reason: "valid Common Access Token (\(credential.carrier))",
            allowance: Allowance(catIssuedBy: verified.token.issuer, resource: resource, expires: expires),
            tokenID: tokenID,
            kindLabel: Self.kindLabel
        )
        let secure = request.forwardedProto != "http"
        func askStore(_ store: any ReplayStore, _ cti: [UInt8], _ exp: Int64, oneUse: Bool) -> Judgement {
            .replayCheck(
                ReplayCheck(
                    answer: answer,
                    verified: verified,
                    store: store,
                    cti: cti,
                    expires: exp,
                    oneUse: oneUse,
                    carrier: credential.carrier,
                    tokenID: tokenID
                )
            )
        }
        switch verified.replay ?? .permitted {
        case .permitted:
            return .decided(renewing(answer, verified, carrier: credential.carrier, now: request.now, secure: secure))
        case .prohibited:
            guard let cti = verified.cti else {
                return refuse(.unsupportedClaim, "catreplay 1 (one use) without a cti: the gate has nothing to remember the token by")
            }
            guard let exp = verified.token.expires else {
                return refuse(.unsupportedClaim, "catreplay 1 (one use) without an exp: the replay store would have to remember it forever")
            }
            guard let replayStore else {
                return refuse(.unsupportedClaim, "catreplay 1 (one use), and the gate keeps no replay store (--replay off)")
            }
            return askStore(replayStore, cti, exp, oneUse: true)
        case .reuseDetection:
            // Reuse is allowed: the store only tells whether it is one. A CAT
            // without a cti or exp cannot be told apart, and a store that does
            // not answer detects nothing; neither refuses.
            guard let cti = verified.cti, let exp = verified.token.expires, let replayStore else {
                return .decided(renewing(answer, verified, carrier: credential.carrier, now: request.now, secure: secure))
            }
            return askStore(replayStore, cti, exp, oneUse: false)
        }
    }

    /// The rest of a decision that asks the replay store about the CAT's `cti`.
    func finish(_ check: ReplayCheck, request: GateRequest) async -> GateDecision {
        let decision = await check.store.accept(
            Self.identity(cti: check.cti),
            until: Self.until(check.expires, leeway: leewaySeconds),
            now: request.now,
            deadline: replayDeadline
        )
        var answer = check.answer
        switch (decision, check.oneUse) {
        case (.accepted, _): break
        case (.replayed, true):
            return Self.refusal(
                .verdict(.tokenReplayed),
                "catreplay 1: this CAT (its cti) was already accepted once",
                carrier: check.carrier,
                tokenID: check.tokenID
            )
        case (.unavailable(let why), true):
            return Self.refusal(
                .verdict(.replayCheckUnavailable),
                "the one-time-use check of the CAT could not be made: \(why)",
                carrier: check.carrier,
                tokenID: check.tokenID
            )
        case (.replayed, false):
            answer.catReuseDetected = true
            answer.reason = "valid Common Access Token, presented again (catreplay 2: reuse detection) (\(check.carrier))"
        case (.unavailable, false): break
        }
        return renewing(answer, check.verified, carrier: check.carrier, now: request.now, secure: request.forwardedProto != "http")
    }

    static func refusal(_ status: GateStatus, _ reason: String, carrier: GateRequest.Carrier, tokenID: String) -> GateDecision {
        GateDecision(status: status, reason: "\(reason) (CAT, \(carrier))", tokenID: tokenID, kindLabel: Self.kindLabel)
    }

    /// `answer` with the renewed CAT that `catr` asks for, when `now` is in
    /// its window (`exp − deadline ≤ now < exp`; docs/DESIGN.md#catr-renewal-at-the-origin):
    /// the same claims with a new `cti`, `iat` = now and `exp` = now + `expadd`,
    /// signed by the first `--cat-key` key of the token's algorithm that can
    /// sign. It goes where `catr`'s type says: a header (`header-name`, else
    /// `CTA-Common-Access-Token`) or a cookie (`cookie-name`, else `cat`) in
    /// the gate's `X-Token-Set-Cookie`, which the shipped sites pass on as
    /// `Set-Cookie`. `automatic` is the carrier the CAT came in, and a query
    /// (which no answer can rewrite) the header; an auth subrequest cannot
    /// redirect the player, so `redirect` is `automatic`. Without a key that
    /// signs (public keys only), or with a header name that is the gate's own,
    /// the request is allowed and not renewed: the reason says why. The
    /// renewed token is never logged, nor put in the reason.
    func renewing(
        _ answer: GateDecision,
        _ verified: VerifiedCommonAccessToken,
        carrier: GateRequest.Carrier,
        now: TokenTimestamp,
        secure: Bool
    ) -> GateDecision {
        guard let renewal = verified.token.renewal, let window = verified.token.renewalWindow else { return answer }
        let seconds = Self.seconds(now)
        guard window.contains(seconds) else { return answer }
        var answer = answer
        // The verified message's structure is its algorithm's: Mac0 HMAC 256/256, Sign1 ES256.
        let algorithm: COSEAlgorithm = verified.message.structure == .mac0 ? .hmacSHA256 : .es256
        guard let key = keys.current.keys.first(where: { $0.canIssue && $0.algorithm == algorithm }) else {
            answer.reason += "; not renewed (catr): no --cat-key of its algorithm can sign"
            return answer
        }
        let asCookie: Bool
        switch renewal.type {
        case .cookie: asCookie = true
        case .header: asCookie = false
        case .automatic, .redirect:
            if case .cookie = carrier { asCookie = true } else { asCookie = false }
        }
        let name = asCookie ? (renewal.cookieName ?? Self.cookieName) : (renewal.headerName ?? Self.headerName)
        if !asCookie, !Self.isRenewalHeaderName(name) {
            answer.reason += "; not renewed (catr): the header \(name) is the gate's own"
            return answer
        }
        let text: String
        do {
            text = try CommonAccessTokenIssuer.renewal(
                of: verified.token,
                now: seconds,
                key: key,
                cti: CommonAccessTokenIssuer.randomCTI()
            )
        } catch {
            answer.reason += "; not renewed (catr): \(error.reason)"
            return answer
        }
        if asCookie {
            answer.setCookie =
                "\(name)=\(text); Path=/; Max-Age=\(renewal.expAdd); HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
        } else {
            answer.renewedCATHeader = GateDecision.HeaderLine(name: name, value: text)
        }
        answer.catRenewed = true
        answer.reason += "; renewed (catr \(renewal.type.name)) as \(asCookie ? "cookie" : "header") \(name)"
        return answer
    }

    /// A header the renewed CAT may be sent in: not one the gate's answer
    /// or the proxy's reading of it owns (`X-Token-*`, caching, cookies, framing).
    static func isRenewalHeaderName(_ name: String) -> Bool {
        let lower = name.lowercased()
        let owned: Set<String> = [
            "set-cookie", "cache-control", "content-length", "content-type", "transfer-encoding", "connection", "date",
            "location", "www-authenticate", "vary", "keep-alive", "upgrade", "trailer", "te", "proxy-authenticate",
        ]
        return !lower.hasPrefix("x-token-") && !owned.contains(lower) && !lower.hasPrefix("access-control-")
    }

    /// The gate's status for a CDN token status (docs/DESIGN.md#endpoints-and-answers).
    static func status(of status: CDNStatus) -> GateStatus {
        switch status {
        case .validToken: .verdict(.validToken)
        case .tokenExpired: .verdict(.tokenExpired)
        case .tokenNotYetValid: .verdict(.tokenNotYetValid)
        case .invalidSignature: .verdict(.invalidSignature)
        case .invalidTokenFormat: .verdict(.invalidTokenFormat)
        case .urlNotCovered: .urlNotCovered
        case .invalidURL: .invalidRequest
        case .ipMismatch: .ipMismatch
        case .unsupportedClaim: .unsupportedClaim
        }
    }

    /// The replay store's key of a CAT: SHA-256 over a label and the `cti`,
    /// which is unique among every issuer's tokens (RFC 8392 §3.1.7). The
    /// label keeps a CAT's key apart from a media token's (SHA-256 of its
    /// signed bytes) in the one store.
    static func identity(cti: [UInt8]) -> ReplayIdentity {
        var hasher = SHA256Hasher()
        Digest.updateFramed(&hasher, "tokengate CAT cti".utf8)
        Digest.updateFramed(&hasher, cti)
        return ReplayIdentity(digest: hasher.finalize().bytes)
    }

    /// `exp` plus `leeway` as a time: when the store may forget a CAT (with
    /// the leeway), or when it expires (without). Past the latest time there
    /// is, the latest; a valid CAT's `exp` is never before the earliest.
    static func until(_ exp: Int64, leeway: Int64) -> TokenTimestamp {
        let (seconds, overflow) = exp.addingReportingOverflow(leeway)
        guard !overflow, seconds < TokenTimestamp.latest.millisecondsSince1970 / 1000 else { return overflow && exp < 0 ? .earliest : .latest }
        guard seconds > TokenTimestamp.earliest.millisecondsSince1970 / 1000 else { return .earliest }
        return TokenTimestamp(millisecondsSince1970: seconds * 1000) ?? .earliest
    }

    static func seconds(_ now: TokenTimestamp) -> Int64 {
        let milliseconds = now.millisecondsSince1970
        return milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
    }

    /// The URL `catu` is judged against: the original URI as the proxy
    /// reported it, up to its first `#`, without the `cat` query parameter
    /// (the token cannot cover its own text; node-cat removes it too). The
    /// scheme and host are the proxy's `X-Forwarded-Proto` and
    /// `X-Forwarded-Host` when `catu` restricts them; a restriction the proxy
    /// gives nothing to judge by is refused, never skipped.
    static func url(judgedBy restriction: CATURIRestriction, request: GateRequest) -> Result<CDNURL, CDNRefusal> {
        guard let reported = request.originalURI else {
            return .failure(CDNRefusal(.urlNotCovered, "catu restricts the URI, and the proxy reported no original URI"))
        }
        let uri = reported.utf8.firstIndex(of: UInt8(ascii: "#")).map { reported[..<$0] } ?? reported
        guard uri.utf8.first == UInt8(ascii: "/") else {
            return .failure(CDNRefusal(.invalidTokenFormat, "catu restricts the URI, and the original URI is not a path"))
        }
        func restricts(_ component: CATURIComponent) -> Bool { restriction.conditions.contains { $0.component == component.rawValue } }
        let scheme: String
        if let proto = request.forwardedProto?.lowercased(), proto == "http" || proto == "https" {
            scheme = proto
        } else if restricts(.scheme) {
            return .failure(CDNRefusal(.unsupportedClaim, "catu restricts the scheme, and the proxy reports no X-Forwarded-Proto of http or https"))
        } else {
            scheme = "https"
        }
        let restrictsAuthority = restricts(.host) || restricts(.port)
        let target = withoutCATParameter(uri)
        // The cat parameter lies in the query, so the path the request reader read is this target's.
        let scopePath = request.scopePath
        // Only a host and port: a `/` or `?` in the header would move bytes into the path judged.
        var host = request.forwardedHost.flatMap { name in
            !name.isEmpty && name.utf8.allSatisfy(\.isAuthorityByte) ? name : nil
        }
        if restrictsAuthority {
            guard host != nil else {
                return .failure(
                    CDNRefusal(
                        .unsupportedClaim,
                        "catu restricts the host or port, and the proxy reports no X-Forwarded-Host that is a host[:port]"
                    )
                )
            }
        } else if let named = host, (try? CDNURL(scheme: scheme, host: named, target: target[...], scopePath: scopePath)) == nil {
            // Never compared: catu names no part of the authority, and the
            // proxy's host is only for the words of a refusal.
            host = nil
        }
        do {
            return .success(try CDNURL(scheme: scheme, host: host ?? "origin.invalid", target: target[...], scopePath: scopePath))
        } catch {
            return .failure(
                CDNRefusal(
                    error.status == .invalidURL ? .invalidURL : .invalidTokenFormat,
                    "the original URI cannot be read as one URL for catu: \(error.reason)"
                )
            )
        }
    }

    /// `uri` without any `cat=…` pair in its query (``CATURIRestriction/uri(withoutParameter:of:)``:
    /// `tokeninspect har` judges `catu` on the same URI).
    static func withoutCATParameter(_ uri: Substring) -> String {
        CATURIRestriction.uri(withoutParameter: parameterName, of: uri)
    }
}

extension ReplayStore {
    /// At once when the store can answer so (in memory), else within `deadline`:
    /// the verifier's way of asking, for a CAT's `cti`.
    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp, deadline: Duration) async -> ReplayDecision {
        if let decision = acceptWithoutWaiting(identity, until: until, now: now) { return decision }
        return await accept(identity, until: until, now: now, within: deadline)
    }
}
