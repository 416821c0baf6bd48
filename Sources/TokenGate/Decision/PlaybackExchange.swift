import CDNTokens
import EntitlementTokens

/// The CDN exchange (docs/DESIGN.md#the-cdn-exchange): a media token in, a
/// CDN's signed URL, cookies or header out. Every check of the auth routes
/// applies to the token (requestor, MVPD, device, TTL, one-time use: the
/// exchange spends it), with the expected resource taken from the request,
/// which must have a URL in the chosen profile. Nothing is spent on a
/// request that is refused before the token is judged.
struct PlaybackExchange: Sendable {
    let gate: AuthGate
    let profiles: Reloaded<CDNProfileSet>

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

        /// A request refused before any profile was chosen.
        static func refused(_ decision: GateDecision) -> Outcome {
            Outcome(decision: decision, profile: "-", kind: "-", grant: nil)
        }
    }

    /// The profile and resource a request names, or why not.
    enum Choice {
        case chosen(profile: CDNProfile, resource: String)
        case refused(GateDecision)
    }

    func choose(_ request: Request) -> Choice {
        let set = profiles.current
        func refuse(_ status: GateStatus, _ reason: String) -> Choice {
            .refused(GateDecision(status: status, reason: reason, kindLabel: "none"))
        }
        let profile: CDNProfile
        if let name = request.profile {
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
        let resource: String
        if let named = request.resource {
            guard profile.settings.url(of: named) != nil else {
                return refuse(.verdict(.invalidResourceID), "the profile \(profile.name) has no URL for the resource \(named)")
            }
            resource = named
        } else {
            guard profile.settings.resources.count == 1, let only = profile.settings.resources.first else {
                return refuse(.badRequest, "the profile \(profile.name) names several resources: say which one with resource")
            }
            resource = only.id
        }
        return .chosen(profile: profile, resource: resource)
    }

    func exchange(_ request: Request) async -> Outcome {
        let chosen: (profile: CDNProfile, resource: String)
        switch choose(request) {
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
        var clientIP: String? = nil
        if profile.settings.bindIP {
            guard request.clientIPs.count <= 1 else {
                return refuse(.badRequest, "the request has more than one \(profile.settings.ipHeader) field: it reads two ways")
            }
            guard let ip = request.clientIPs.first, let address = CDNIPAddress(ip) else {
                return refuse(
                    .badRequest,
                    "the profile \(profile.name) binds the viewer's IP, and the request has no usable \(profile.settings.ipHeader)"
                )
            }
            // Its canonical text (`[2001:DB8::1]` is `2001:db8::1`, `::ffff:192.0.2.7` is `192.0.2.7`):
            // what every issuer takes and what an edge compares, so no spelling is refused after the token is spent.
            clientIP = address.description
        }
        // Nothing the request sent can make the issuer refuse now: the profile,
        // the resource and the IP are checked above, and the load already
        // tried each resource (an ACL or URL it would have to escape is a
        // configuration error). What remains (OpenSSL out of randomness) is the
        // operator's 500 below.
        var decision = await gate.decide(
            token: Substring(request.token).utf8,
            resource: chosen.resource,
            deviceID: request.deviceID,
            now: request.now,
            issuesSession: false
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
        guard decision.status == .verdict(.validToken), let allowance = decision.allowance else {
            return Outcome(decision: decision, profile: profile.name, kind: profile.kind.rawValue, grant: nil)
        }
        do {
            let grant = try profile.issue(
                resource: chosen.resource,
                now: request.now.millisecondsSince1970 / 1000,
                clientIP: clientIP,
                requestor: gate.configuration.requestorID ?? allowance.requestor
            )
            return Outcome(decision: decision, profile: profile.name, kind: profile.kind.rawValue, grant: grant)
        } catch {
            // The token is spent and nothing was handed out: say so loudly, it is the operator's to fix.
            decision.status = .cdnIssueFailed
            decision.reason = "the profile \(profile.name) could not issue for \(chosen.resource): \(error.reason)"
            return Outcome(decision: decision, profile: profile.name, kind: profile.kind.rawValue, grant: nil)
        }
    }
}
