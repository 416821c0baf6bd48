import CDNTokens
import EntitlementTokens

/// The CDN exchange (docs/DESIGN.md#the-cdn-exchange): a media token in, a
/// CDN's signed URL, cookies or header out. Every check of the auth routes
/// applies to the token (requestor, MVPD, device, TTL, one-time use: the
/// exchange spends it), with the expected resource taken from the request,
/// which must have a URL in the chosen profile. Nothing is spent on a
/// request that is refused before the token is judged.
///
/// Every allowed exchange also opens a playback session for the resource
/// (docs/DESIGN.md#every-player-the-whole-event), the credential renewal and
/// the manifest route take: a player that keeps no cookies carries it in the
/// manifest URLs, a web player sends it to `POST /v1/playback/renew`.
struct PlaybackExchange: Sendable {
    let gate: AuthGate
    let profiles: Reloaded<CDNProfileSet>
    /// `--public-url` followed by the manifest route's path: where a
    /// manifest profile's `url` points (nil: no manifest profile).
    var manifestRoute: String? = nil

    /// What the HTTP layer read from `POST` (JSON) or `GET` (query) `/v1/playback`.
    struct Request: Sendable {
        var token: String
        var resource: String?
        var profile: String?
        var deviceID: String?
        /// Every value of the profile's IP header the proxy sent (two field lines read two ways).
        var clientIPs: [String]
        /// `Sec-Purpose: prefetch` or `Purpose: prefetch`: a browser asking ahead, not a viewer.
        var isPrefetch: Bool
        var now: TokenTimestamp
    }

    /// The answer: the token's decision, and the grant when it was allowed.
    /// `profile` and `kind` are metric labels, so they come from the
    /// configuration only: a configured profile's name and kind, or `-` when
    /// the request named none that exists (never the name a client sent).
    struct Outcome: Sendable {
        var decision: GateDecision
        var profile: String
        var kind: String
        var grant: CDNGrant?
        /// The playback session the exchange opened (nil without `--session-secret`, and on renewal).
        var session: OpenedSession? = nil

        /// A request refused before any profile was chosen.
        static func refused(_ decision: GateDecision) -> Outcome {
            Outcome(decision: decision, profile: "-", kind: "-", grant: nil)
        }
    }

    /// A session credential and when it ends.
    struct OpenedSession: Sendable {
        var credential: String
        var expires: TokenTimestamp
    }

    /// What the HTTP layer read from `POST /v1/playback/renew`.
    struct RenewalRequest: Sendable {
        var resource: String?
        var profile: String?
        var deviceID: String?
        /// Every session candidate, from every carrier of docs/DESIGN.md#playback-sessions.
        var sessions: [GateRequest.Credential]
        var clientIPs: [String]
        var now: TokenTimestamp
    }

    /// The profile and resource a request names, or why not.
    enum Choice {
        case chosen(profile: CDNProfile, resource: String)
        case refused(GateDecision)
    }

    func choose(profile named: String?, resource: String?) -> Choice {
        let set = profiles.current
        func refuse(_ status: GateStatus, _ reason: String) -> Choice {
            .refused(GateDecision(status: status, reason: reason, kindLabel: "none"))
        }
        let profile: CDNProfile
        if let name = named {
            guard let named = set.profile(named: name) else {
                return refuse(.badRequest, "no CDN profile is named \(name) (configured: \(set.names.joined(separator: ", ")))")
            }
            profile = named
        } else {
            guard set.profiles.count == 1, let only = set.profiles.first else {
                return refuse(
                    .badRequest,
                    set.profiles.isEmpty
                        ? "no CDN profile is configured (--cdn-profile): the gate hands out no CDN token"
                        : "more than one CDN profile is configured: name one with profile (\(set.names.joined(separator: ", ")))"
                )
            }
            profile = only
        }
        let chosen: String
        if let named = resource {
            guard profile.settings.url(of: named) != nil else {
                return refuse(.verdict(.invalidResourceID), "the profile \(profile.name) has no URL for the resource \(named)")
            }
            chosen = named
        } else {
            guard profile.settings.resources.count == 1, let only = profile.settings.resources.first else {
                return refuse(.badRequest, "the profile \(profile.name) names several resources: say which one with resource")
            }
            chosen = only.id
        }
        return .chosen(profile: profile, resource: chosen)
    }

    func exchange(_ request: Request) async -> Outcome {
        let chosen: (profile: CDNProfile, resource: String)
        switch choose(profile: request.profile, resource: request.resource) {
        case .chosen(let profile, let resource): chosen = (profile, resource)
        case .refused(let refusal): return .refused(refusal)
        }
        let profile = chosen.profile
        func refuse(_ status: GateStatus, _ reason: String) -> Outcome {
            Outcome(
                decision: GateDecision(status: status, reason: reason, kindLabel: "none"),
                profile: profile.name,
                kind: profile.kind.rawValue,
                grant: nil
            )
        }
        if request.isPrefetch {
            return refuse(.badRequest, "a prefetch is not a viewer: the token is not spent (open the URL when playback starts)")
        }
        let clientIP: String?
        switch Self.clientIP(request.clientIPs, profile: profile) {
        case .success(let ip): clientIP = ip
        case .failure(let refusal): return refuse(.badRequest, refusal.reason)
        }
        // Nothing the request sent can make the issuer refuse now: the profile,
        // the resource and the IP are checked above, and the load already
        // tried each resource (an ACL or URL it would have to escape is a
        // configuration error). What remains (OpenSSL out of randomness) is the
        // operator's 500 below.
        var decision = await gate.judge(
            token: Substring(request.token).utf8,
            resource: chosen.resource,
            deviceID: request.deviceID,
            now: request.now
        )
        // The kind first, valid or not: an authentication or authorization token is the wrong
        // request (400), not a refused credential (its resource check would say 403).
        let tokenKind = decision.allowance?.kind ?? decision.kindLabel
        if tokenKind != TokenKind.media.rawValue, TokenKind(rawValue: tokenKind) != nil {
            decision.status = .badRequest
            decision.allowance = nil
            decision.reason = "a \(tokenKind) token is not exchanged: the exchange takes a short media token, which it spends once"
            return Outcome(decision: decision, profile: profile.name, kind: profile.kind.rawValue, grant: nil)
        }
        guard decision.status == .verdict(.validToken), decision.allowance != nil else {
            return Outcome(decision: decision, profile: profile.name, kind: profile.kind.rawValue, grant: nil)
        }
        var session: OpenedSession? = nil
        if let credential = decision.session, let lifetime = gate.sessions?.current.lifetimeMilliseconds {
            session = OpenedSession(credential: credential, expires: request.now.adding(milliseconds: lifetime) ?? .latest)
        }
        var outcome = issue(profile, resource: chosen.resource, session: session, clientIP: clientIP, now: request.now, decision: decision)
        outcome.session = session
        return outcome
    }

    /// A fresh CDN token from a playback session (`POST /v1/playback/renew`):
    /// what the exchange hands out, without a media token, for the session's
    /// resource while it lasts.
    func renew(_ request: RenewalRequest) -> Outcome {
        let chosen: (profile: CDNProfile, resource: String)
        switch choose(profile: request.profile, resource: request.resource) {
        case .chosen(let profile, let resource): chosen = (profile, resource)
        case .refused(let refusal): return .refused(refusal)
        }
        let profile = chosen.profile
        func refuse(_ decision: GateDecision) -> Outcome {
            Outcome(decision: decision, profile: profile.name, kind: profile.kind.rawValue, grant: nil)
        }
        guard let sessions = gate.sessions?.current else {
            return refuse(
                GateDecision(
                    status: .badRequest,
                    reason: "the gate opens no playback sessions (--session-secret): nothing to renew",
                    kindLabel: "none"
                )
            )
        }
        guard !request.sessions.isEmpty else {
            return refuse(
                GateDecision(status: .noToken, reason: "no playback session: renewal takes the session the exchange opened", kindLabel: "none")
            )
        }
        if let ambiguity = Self.ambiguity(of: request.sessions) {
            return refuse(GateDecision(status: .badRequest, reason: ambiguity, kindLabel: "none"))
        }
        let clientIP: String?
        switch Self.clientIP(request.clientIPs, profile: profile) {
        case .success(let ip): clientIP = ip
        case .failure(let refusal): return refuse(GateDecision(status: .badRequest, reason: refusal.reason, kindLabel: "none"))
        }
        let judged = gate.judge(
            sessions: request.sessions,
            with: sessions,
            resource: chosen.resource,
            deviceID: request.deviceID,
            allowsUnboundDevice: gate.configuration.allowUnboundDevice,
            now: request.now
        )
        switch judged {
        case .refused(let refusal):
            return refuse(refusal)
        case .allowed(let decision, let credential, let expires):
            let session = OpenedSession(credential: String(credential.value), expires: expires)
            return issue(profile, resource: chosen.resource, session: session, clientIP: clientIP, now: request.now, decision: decision)
        }
    }

    /// The grant of an allowed exchange or renewal: a manifest profile's
    /// `url` on the gate's manifest route with the session, else the CDN's
    /// token from the profile.
    private func issue(
        _ profile: CDNProfile,
        resource: String,
        session: OpenedSession?,
        clientIP: String?,
        now: TokenTimestamp,
        decision: GateDecision
    ) -> Outcome {
        var decision = decision
        if profile.settings.carrier == .manifest {
            guard let manifestRoute, let session, let url = profile.settings.url(of: resource) else {
                decision.status = .cdnIssueFailed
                decision.reason = "the manifest profile \(profile.name) needs --public-url and --session-secret"
                return Outcome(decision: decision, profile: profile.name, kind: profile.kind.rawValue, grant: nil)
            }
            let target = manifestRoute + url.path + "?" + (url.query.map { $0 + "&" } ?? "") + "\(ManifestScope.sessionName)=\(session.credential)"
            let grant = CDNGrant(
                profile: profile.name,
                kind: profile.kind,
                url: target,
                expires: session.expires.millisecondsSince1970 / 1000,
                cookies: [],
                headers: []
            )
            return Outcome(decision: decision, profile: profile.name, kind: profile.kind.rawValue, grant: grant)
        }
        do {
            let grant = try profile.issue(
                resource: resource,
                now: now.millisecondsSince1970 / 1000,
                clientIP: clientIP,
                requestor: gate.configuration.requestorID ?? decision.allowance?.requestor
            )
            return Outcome(decision: decision, profile: profile.name, kind: profile.kind.rawValue, grant: grant)
        } catch {
            // The token is spent and nothing was handed out: say so loudly, it is the operator's to fix.
            decision.status = .cdnIssueFailed
            decision.reason = "the profile \(profile.name) could not issue for \(resource): \(error.reason)"
            return Outcome(decision: decision, profile: profile.name, kind: profile.kind.rawValue, grant: nil)
        }
    }

    /// The viewer's address as every issuer takes it, when the profile binds one.
    static func clientIP(_ values: [String], profile: CDNProfile) -> Result<String?, CDNRefusal> {
        guard profile.settings.bindIP else { return .success(nil) }
        guard values.count <= 1 else {
            return .failure(.format("the request has more than one \(profile.settings.ipHeader) field: it reads two ways"))
        }
        guard let ip = values.first, let address = CDNIPAddress(ip) else {
            return .failure(.format("the profile \(profile.name) binds the viewer's IP, and the request has no usable \(profile.settings.ipHeader)"))
        }
        // Its canonical text (`[2001:DB8::1]` is `2001:db8::1`, `::ffff:192.0.2.7` is `192.0.2.7`):
        // what every issuer takes and what an edge compares, so no spelling is refused after the token is spent.
        return .success(address.description)
    }

    /// Two different session values in one request read two ways.
    static func ambiguity(of sessions: [GateRequest.Credential]) -> String? {
        guard let first = sessions.first, let other = sessions.dropFirst().first(where: { !$0.value.utf8.elementsEqual(first.value.utf8) }) else {
            return nil
        }
        return "the request carries two different playback sessions (\(first.carrier), \(other.carrier)): it reads two ways"
    }
}
