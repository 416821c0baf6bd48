import CDNTokens
import EntitlementTokens

/// The manifest route (docs/DESIGN.md#the-manifest-route): a playback
/// session from the query, the manifest from the profile's origin (one
/// fetch shared by every viewer while it lasts), one CDN token made for the
/// viewer, and every URI of the manifest rewritten with it.
///
/// The origin is trusted less than the gate's configuration: what it sends
/// is read by the library's strict readers, a URI outside the profile's
/// folder gets no token, and a manifest read with any doubt is
/// `MANIFEST_UNREADABLE`, never passed on.
struct ManifestService: Sendable {
    let gate: AuthGate
    let profiles: Reloaded<CDNProfileSet>
    let origin: any ManifestOrigin
    let cache: SharedAnswerCache<OriginResult>
    /// The path players reach the route by: `--public-url`'s path and `/v1/manifest`.
    let route: String
    /// How long one fetch from the origin may take, connect to last byte.
    let originDeadline: Duration
    let events: any DecisionEvents

    /// What the HTTP layer read from `GET /v1/manifest/{path}`.
    struct Request: Sendable {
        /// The manifest's path below the route, from its `/`.
        var path: String
        /// The query without the session parameter, forwarded to the origin (nil: none).
        var query: String?
        var sessions: [GateRequest.Credential]
        var deviceID: String?
        var clientIPs: [String]
        var now: TokenTimestamp
    }

    /// An answer: the decision (for the metrics and the log) and, when it
    /// allowed, the rewritten manifest and its media type.
    struct Answer: Sendable {
        var outcome: PlaybackExchange.Outcome
        var body: [UInt8] = []
        var contentType: String? = nil
    }

    /// One fetch, as every viewer of its path shares it.
    enum OriginResult: Sendable {
        case manifest(ParsedManifest)
        case unreadable(String)
        case notFound(Int)
        case unavailable(String)
    }

    /// A live manifest is shared for at most this long; a VOD one as its `Cache-Control` allows.
    static let liveSharing: Duration = .seconds(1)
    /// What one read URI holds in memory (its resolved parts, its writing
    /// made ready, the allocator's slack), for the cache's byte bound: measured
    /// against the process's RSS (docs/PERFORMANCE.md).
    static let bytesPerEdit = 512
    /// The longest a VOD manifest is shared, whatever the origin allows.
    static let longestSharing: Duration = .seconds(3600)

    func serve(_ request: Request) async -> Answer {
        func refused(_ status: GateStatus, _ reason: String, profile: CDNProfile? = nil, kindLabel: String = "none") -> Answer {
            Answer(
                outcome: PlaybackExchange.Outcome(
                    decision: GateDecision(status: status, reason: reason, kindLabel: kindLabel),
                    profile: profile?.name ?? "-",
                    kind: profile?.kind.rawValue ?? "-",
                    grant: nil
                )
            )
        }
        // §14's one reading: the path that is judged is the path that is fetched.
        let url: CDNURL
        do { url = try CDNURL(parsing: "http://manifest.invalid" + request.path + (request.query.map { "?" + $0 } ?? "")) } catch {
            return refused(.invalidRequest, "the manifest path: \(error.reason)")
        }
        // The profiles and resources whose folder holds the path: a session binds one resource.
        var candidates: [(profile: CDNProfile, resource: String, url: CDNURL)] = []
        for profile in profiles.current.profiles where profile.settings.carrier == .manifest {
            for resource in profile.settings.resources where url.scopePath.hasPrefix(resource.url.folderPath) {
                candidates.append((profile, resource.id, resource.url))
                if candidates.count == 8 { break }
            }
        }
        guard !candidates.isEmpty else {
            return refused(.verdict(.invalidResourceID), "no manifest profile's resource has a folder that holds \(request.path)")
        }
        guard let sessions = gate.sessions?.current else {
            return refused(.badRequest, "the gate opens no playback sessions (--session-secret)")
        }
        guard !request.sessions.isEmpty else {
            return refused(.noToken, "no playback session: the manifest route takes the session in \(ManifestScope.sessionName)")
        }
        if let ambiguity = PlaybackExchange.ambiguity(of: request.sessions) { return refused(.badRequest, ambiguity) }
        var refusal: GateDecision? = nil
        var allowed: (profile: CDNProfile, resource: String, resourceURL: CDNURL, session: PlaybackExchange.OpenedSession, decision: GateDecision)? =
            nil
        for candidate in candidates {
            // A player that keeps no cookies sends no device header either: the
            // session, a secret in the URL, is the viewer's credential here.
            switch gate.judge(
                sessions: request.sessions,
                with: sessions,
                resource: candidate.resource,
                deviceID: request.deviceID,
                allowsUnboundDevice: true,
                now: request.now
            ) {
            case .allowed(let decision, let credential, let expires):
                allowed = (
                    candidate.profile, candidate.resource, candidate.url,
                    PlaybackExchange.OpenedSession(credential: String(credential.value), expires: expires), decision
                )
            case .refused(let answer):
                if refusal == nil || answer.status.httpStatus < refusal!.status.httpStatus { refusal = answer }
            }
            if allowed != nil { break }
        }
        guard let allowed else {
            let answer = refusal!
            return refused(answer.status, answer.reason, profile: candidates[0].profile, kindLabel: answer.kindLabel)
        }
        let profile = allowed.profile
        let clientIP: String?
        switch PlaybackExchange.clientIP(request.clientIPs, profile: profile) {
        case .success(let ip): clientIP = ip
        case .failure(let failure): return refused(.badRequest, failure.reason, profile: profile)
        }

        let fetched = await fetch(path: request.path, query: request.query, profile: profile, resourceURL: allowed.resourceURL)
        let parsed: ParsedManifest
        switch fetched {
        case .manifest(let manifest): parsed = manifest
        case .unreadable(let why): return refused(.manifestUnreadable, why, profile: profile)
        case .notFound(let status): return refused(.manifestNotFound, "the origin answered \(status) for \(request.path)", profile: profile)
        case .unavailable(let why): return refused(.manifestOriginUnavailable, why, profile: profile)
        }

        let nowSeconds = request.now.millisecondsSince1970 / 1000
        let untilSessionEnd = max(1, (allowed.session.expires.millisecondsSince1970 - request.now.millisecondsSince1970) / 1000)
        let lifetime = parsed.tokenLifetime(profileLifetime: profile.lifetime, secondsUntilSessionEnd: untilSessionEnd)
        let token: [CDNField]
        do {
            token = try profile.queryToken(
                resource: allowed.resource,
                now: nowSeconds,
                lifetime: lifetime,
                clientIP: clientIP,
                requestor: gate.configuration.requestorID ?? allowed.decision.allowance?.requestor
            ).fields
        } catch {
            return refused(.cdnIssueFailed, "the profile \(profile.name) could not issue for \(allowed.resource): \(error.reason)", profile: profile)
        }
        let viewer = ManifestViewer(gateRoute: route, session: allowed.session.credential, token: token)
        events.manifestRewritten(
            tokenized: parsed.counts.tokenized + parsed.counts.rebased,
            routed: parsed.counts.routed,
            leftAlone: parsed.counts.leftAlone
        )
        return Answer(
            outcome: PlaybackExchange.Outcome(decision: allowed.decision, profile: profile.name, kind: profile.kind.rawValue, grant: nil),
            body: parsed.rewritten(for: viewer),
            contentType: Self.mediaType(of: parsed.format)
        )
    }

    /// The origin's answer for a path, shared: the cache's key names the
    /// profile (its origin, folder and limits) and the whole request target.
    private func fetch(path: String, query: String?, profile: CDNProfile, resourceURL: CDNURL) async -> OriginResult {
        guard let base = profile.settings.manifestOrigin else { return .unavailable("the profile \(profile.name) has no manifest-origin") }
        var basePath = base.path
        while basePath.hasSuffix("/") { basePath.removeLast() }
        let target = basePath + path + (query.map { "?" + $0 } ?? "")
        let key = profile.name + "\u{0}" + resourceURL.origin + resourceURL.folderPath + "\u{0}" + target
        let request = OriginRequest(
            scheme: base.scheme,
            host: base.host,
            port: base.port ?? (base.scheme == "https" ? 443 : 80),
            target: target,
            maximumBytes: profile.settings.manifestMaxBytes,
            deadline: originDeadline
        )
        let origin = self.origin
        let events = self.events
        // Relative URIs resolve against the manifest's place on the CDN: the same path under the resource's host.
        let manifestURL = resourceURL.origin + path + (query.map { "?" + $0 } ?? "")
        let scope = ManifestScope(resourceURL: resourceURL, tokenNames: profile.queryTokenNames)
        let limits = ManifestLimits(maximumBytes: profile.settings.manifestMaxBytes)
        return await cache.value(for: key) {
            let answer: OriginAnswer
            switch await origin.fetch(request) {
            case .success(let fetched): answer = fetched
            case .failure(let error):
                events.manifestFetched(.unavailable)
                return .init(value: .unavailable("the origin \(base.origin): \(error)"), lifetime: .zero, cost: 0)
            }
            switch answer.status {
            case 200: break
            case 404, 410:
                events.manifestFetched(.notFound)
                return .init(value: .notFound(answer.status), lifetime: Self.liveSharing, cost: 64 + key.utf8.count)
            default:
                events.manifestFetched(.unavailable)
                return .init(value: .unavailable("the origin answered \(answer.status) for \(target)"), lifetime: .zero, cost: 0)
            }
            do {
                let url = try CDNURL(parsing: manifestURL)
                let parsed = try ParsedManifest.read(answer.body, url: url, scope: scope, limits: limits)
                events.manifestFetched(.fetched)
                return .init(
                    value: .manifest(parsed),
                    lifetime: Self.sharing(parsed, cacheControl: answer.cacheControl),
                    cost: parsed.bytes.count + parsed.edits.count * Self.bytesPerEdit + key.utf8.count
                )
            } catch let error as ManifestError {
                events.manifestFetched(.unreadable)
                return .init(value: .unreadable("\(target): \(error.reason)"), lifetime: Self.liveSharing, cost: 256 + key.utf8.count)
            } catch {
                events.manifestFetched(.unreadable)
                return .init(value: .unreadable("\(target): \(error)"), lifetime: Self.liveSharing, cost: 256 + key.utf8.count)
            }
        }
    }

    /// How long an answer is shared: a live manifest (or any manifest whose
    /// origin says nothing) one second at most; a VOD manifest as its
    /// `Cache-Control: max-age` allows, up to an hour. `no-store`,
    /// `no-cache` and `private` share it only with the viewers already waiting.
    static func sharing(_ parsed: ParsedManifest, cacheControl: String?) -> Duration {
        let directives = (cacheControl ?? "").lowercased().split(separator: ",").map { $0.trimmingSpaces }
        if directives.contains(where: { $0 == "no-store" || $0 == "no-cache" || $0 == "private" }) { return .zero }
        let maxAge = directives.lazy.compactMap { directive -> Int64? in
            guard directive.hasPrefix("max-age=") || directive.hasPrefix("s-maxage=") else { return nil }
            return Int64(directive.split(separator: "=", maxSplits: 1).last ?? "")
        }.first
        if let maxAge, maxAge <= 0 { return .zero }
        guard !parsed.isLive, let maxAge else { return min(liveSharing, maxAge.map { .seconds($0) } ?? liveSharing) }
        return min(.seconds(maxAge), longestSharing)
    }

    /// The format's own media type, whatever the origin labelled it: what
    /// the gate answers is what it read, and a player picks its reader by it.
    static func mediaType(of format: ManifestFormat) -> String {
        switch format {
        case .dash: "application/dash+xml"
        default: "application/vnd.apple.mpegurl"
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var slice = self
        while slice.first == " " || slice.first == "\t" { slice = slice.dropFirst() }
        while slice.last == " " || slice.last == "\t" { slice = slice.dropLast() }
        return slice
    }
}
