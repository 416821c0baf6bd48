import CDNTokens
import EntitlementTokens

/// A capture's report: every entry, every credential judged at its entry's
/// time, the chain from media token to segments, and the findings, first
/// failure first (docs/DESIGN.md#reading-a-capture).
///
/// Fed entry by entry as the reader hands them over (`add(_:)`), then
/// `finish()`: nothing of an entry but its ``HARTimelineEntry`` is kept.
package struct HARAnalysis {
    private(set) var finder: HARCredentialFinder
    private(set) var entries: [HARTimelineEntry] = []
    /// What was skipped outside entries (entries over the limit, …).
    var readerNotes: [String] = []

    /// What `--redact` replaces, gathered as the entries pass when asked for (nil otherwise).
    package private(set) var secrets: HARSecrets?

    package init(keys: HARKeys, gathersSecrets: Bool = false) {
        finder = HARCredentialFinder(keys: keys)
        secrets = gathersSecrets ? HARSecrets() : nil
    }

    package mutating func add(_ entry: HAREntry) {
        let credentials = finder.credentials(in: entry)
        secrets?.add(entry, credentials: credentials)
        entries.append(HARTimelineEntry(entry: entry, credentials: credentials))
    }

    package func finish(readerNotes: [String] = []) -> HARReport {
        var analysis = self
        analysis.readerNotes = readerNotes
        return analysis.report()
    }

    // MARK: The report

    private func report() -> HARReport {
        // The file's numbers are kept; the timeline is in the order the requests started
        // (entries without a time last, in file order).
        let timeline = entries.sorted { a, b in
            switch (a.started, b.started) {
            case (let x?, let y?): x == y ? a.number < b.number : x < y
            case (.some, nil): true
            case (nil, .some): false
            case (nil, nil): a.number < b.number
            }
        }
        let leeway = finder.keys.leewaySeconds
        let sanitized = isSanitized(timeline)
        var findings = refusals(timeline, sanitized: sanitized)
        findings += reuses(timeline, already: findings)
        if let clock = clockSkew(timeline, leeway: leeway) { findings.append(clock) }
        if sanitized {
            findings.append(
                HARFinding(
                    kind: "SANITIZED",
                    entries: [],
                    message:
                        "the HAR was sanitized on export: no Cookie, Set-Cookie or Authorization appears anywhere while requests that "
                        + "needed a credential were admitted; what they carried is not judged and no player is blamed for it. Export "
                        + "with sensitive data (Chrome: \"Export HAR (with sensitive data)\"; docs/HAR.md says how for each browser and proxy)",
                    isFailure: false
                )
            )
        }
        for entry in timeline where !entry.skipped.isEmpty {
            findings.append(
                HARFinding(kind: "NOT_READ", entries: [entry.number], message: entry.skipped.joined(separator: "; "), isFailure: false)
            )
        }
        for note in readerNotes {
            findings.append(HARFinding(kind: "NOT_READ", entries: [], message: note, isFailure: false))
        }
        let order = Dictionary(uniqueKeysWithValues: timeline.enumerated().map { ($1.number, $0) })
        // First failure first: failures by where they first showed, then the rest in that order.
        let sorted = findings.enumerated().sorted { a, b in
            if a.element.isFailure != b.element.isFailure { return a.element.isFailure }
            let x = a.element.entries.first.flatMap { order[$0] } ?? Int.max
            let y = b.element.entries.first.flatMap { order[$0] } ?? Int.max
            return x == y ? a.offset < b.offset : x < y
        }.map(\.element)
        return HARReport(timeline: timeline, chain: chain(timeline), findings: sorted, firstTime: timeline.first?.started)
    }

    /// A refused request, and each that failed without an answer, under its cause:
    /// retries and the refusals that follow from one cause are listed under it.
    private func refusals(_ timeline: [HARTimelineEntry], sanitized: Bool) -> [HARFinding] {
        var findings: [HARFinding] = []
        var byCause: [String: Int] = [:]
        func add(_ cause: String, kind: String, entry: Int, message: @autoclosure () -> String) {
            if let index = byCause[cause] {
                findings[index].entries.append(entry)
            } else {
                byCause[cause] = findings.count
                findings.append(HARFinding(kind: kind, entries: [entry], message: message(), isFailure: true))
            }
        }
        var sentBefore: Set<String> = []
        var carriedByHost: [String: Int] = [:]
        // The cookies handed out so far, the latest few only: what a request that
        // carried none is compared with (a bound keeps the cost linear in the capture).
        var issued: [IssuedCookie] = []
        var issuedByFingerprint: [String: IssuedCookie] = [:]
        let carriers = sentIndex(timeline)
        for entry in timeline {
            defer {
                for credential in entry.sent { sentBefore.insert(credential.fingerprint) }
                if !entry.sent.isEmpty, carriedByHost[entry.host] == nil { carriedByHost[entry.host] = entry.number }
                for credential in entry.received where credential.place == .setCookie || credential.cookieLifetime != nil {
                    let cookie = IssuedCookie(credential: credential, started: entry.started, host: entry.host)
                    issued.append(cookie)
                    if issued.count > 16 { issued.removeFirst() }
                    issuedByFingerprint[credential.fingerprint] = cookie
                }
            }
            if entry.failedWithoutAnswer {
                let why = entry.error ?? "no answer (status 0)"
                add(
                    "failed \(entry.host) \(why)",
                    kind: "REQUEST_FAILED",
                    entry: entry.number,
                    message: "#\(entry.number) \(entry.method) \(entry.host) got no answer: \(why)"
                )
                continue
            }
            guard entry.isRefused else { continue }
            let refusedBy = "#\(entry.number) was refused (\(entry.status))"
            if let reused = entry.sent.first(where: { $0.kind == .mediaToken && sentBefore.contains($0.fingerprint) }) {
                add("reused \(reused.fingerprint)", kind: "TOKEN_REUSED", entry: entry.number, message: reuseMessage(reused, carriers))
                continue
            }
            if let failing = entry.sent.first(where: { $0.verdict.isFailure }) {
                var message =
                    "\(refusedBy): its \(failing.kind.rawValue) \(failing.fingerprint) in \(failing.place.rawValue) is \(failing.verdict.status): \(failing.verdict.reason)"
                if failing.verdict.status == "TOKEN_EXPIRED" || failing.verdict.status == "SESSION_EXPIRED",
                    let source = issuedByFingerprint[failing.fingerprint]?.credential
                {
                    message +=
                        "; issued by #\(source.entry)\(source.cookieLifetime.map { " with a lifetime of \($0) s" } ?? "")"
                        + "\(source.expires.map { ", expired at \($0.iso8601)" } ?? "") and never renewed"
                }
                add("\(failing.verdict.status) \(failing.fingerprint)", kind: failing.verdict.status, entry: entry.number, message: message)
                continue
            }
            if let carried = entry.sent.first {
                let gateSays = entry.credentials.first { $0.kind == .tokenStatus }
                add(
                    "refused \(carried.fingerprint)",
                    kind: gateSays?.verdict.status ?? "REFUSED",
                    entry: entry.number,
                    message: "\(refusedBy) though its \(carried.kind.rawValue) \(carried.fingerprint) was \(carried.verdict.status) at its time"
                        + (gateSays.map { ": the gate said \($0.verdict.status) (\($0.verdict.reason))" } ?? "")
                        + (carried.verdict.status == HARVerdict.notChecked
                            ? "; give its key (\(Self.keyOptions(for: carried.kind))) to judge it" : "")
                )
                continue
            }
            // It carried nothing.
            if let cookie = expiredCookie(for: entry, issued: issued) {
                let end = cookie.end
                add(
                    "cookie \(cookie.credential.fingerprint)",
                    kind: "COOKIE_EXPIRED",
                    entry: entry.number,
                    message: "\(refusedBy) carrying no credential: the \(cookie.credential.kind.rawValue) cookie \(cookie.credential.fingerprint) "
                        + "issued by #\(cookie.credential.entry) with a lifetime of \(cookie.credential.cookieLifetime ?? 0) s expired at "
                        + "\(end.iso8601) and was never renewed (the browser dropped it at its Max-Age)"
                )
            } else if let scope = outsideScope(entry, issued: issued) {
                add(scope.cause, kind: "URL_NOT_COVERED", entry: entry.number, message: "\(refusedBy) carrying no credential: \(scope.why)")
            } else if sanitized {
                continue  // the export stripped what it carried: the SANITIZED finding says so
            } else if let earlier = carriedByHost[entry.host] {
                add(
                    "dropped \(entry.host)",
                    kind: "CREDENTIAL_DROPPED",
                    entry: entry.number,
                    message: "\(refusedBy) carrying no credential where the previous requests to \(entry.host) did (#\(earlier)): "
                        + "a player that drops cookies; the gate's manifest route puts the token into the manifest for it"
                )
            } else {
                add(
                    "bare \(entry.host)",
                    kind: "NO_CREDENTIAL",
                    entry: entry.number,
                    message: "\(refusedBy) carrying no credential, and no earlier request to \(entry.host) carried one"
                )
            }
        }
        return findings
    }

    /// The options that give the key of a credential of `kind`.
    static func keyOptions(for kind: HARCredentialKind) -> String {
        switch kind {
        case .session: "--session-secret"
        case .cat: "--cat-key, --profile"
        case .mediaToken, .authenticationToken, .authorizationToken: "--key"
        default: "--key, --profile"
        }
    }

    /// The last cookie issued before `entry` for its host and path whose lifetime had ended at its time.
    private func expiredCookie(for entry: HARTimelineEntry, issued: [IssuedCookie]) -> (credential: HARCredential, end: TokenTimestamp)? {
        guard let time = entry.started else { return nil }
        for cookie in issued.reversed() {
            let credential = cookie.credential
            guard let lifetime = credential.cookieLifetime, let start = cookie.started, let end = start.adding(milliseconds: lifetime * 1000) else {
                continue
            }
            if let domain = credential.cookieDomain?.lowercased().trimmingPrefix("."), !entry.host.lowercased().hasSuffix(String(domain)) { continue }
            if credential.cookieDomain == nil, cookie.host != entry.host { continue }
            if let path = credential.cookiePath, !entry.path.hasPrefix(path) { continue }
            return end < time ? (credential, end) : nil
        }
        return nil
    }

    /// A request that carried nothing because its URL is outside what its host's
    /// credentials cover (docs/HAR.md#what-the-findings-mean, `URL_NOT_COVERED`):
    /// the cookies issued for its host are scoped to another path, so the browser
    /// rightly kept them back; or, with the profile, its path is under none of the
    /// folders the profile's resources give that origin (a URI the gate's manifest
    /// route wrote no token into). Not a player that dropped its credential.
    private func outsideScope(_ entry: HARTimelineEntry, issued: [IssuedCookie]) -> (cause: String, why: String)? {
        let path = String(entry.path.prefix { $0 != "?" })
        let forHost = issued.filter { cookie in
            let credential = cookie.credential
            guard credential.cookiePath != nil else { return false }
            if let domain = credential.cookieDomain?.lowercased().trimmingPrefix(".") {
                return entry.host.lowercased() == domain || entry.host.lowercased().hasSuffix("." + domain)
            }
            return cookie.host == entry.host
        }
        if let latest = forHost.last, let scope = latest.credential.cookiePath {
            guard !forHost.contains(where: { path.hasPrefix($0.credential.cookiePath ?? "/") }) else { return nil }
            let credential = latest.credential
            return (
                "scope \(credential.fingerprint)",
                "\(path) is outside \(scope), the path of the \(credential.kind.rawValue) cookie \(credential.fingerprint) issued by "
                    + "#\(credential.entry), so the browser did not send it: the token covers that folder only, and a URL of another "
                    + "folder needs a token of its own"
            )
        }
        guard let url = try? CDNURL(parsing: entry.url) else { return nil }
        for profile in finder.keys.profiles {
            let resources = profile.settings.resources.filter { $0.url.origin == url.origin }
            guard !resources.isEmpty, !resources.contains(where: { profile.settings.scope.covers(url, grantedFor: $0.url) }) else { continue }
            let covered = resources.map { profile.settings.scope.coveredPath(of: $0.url) }
            return (
                "scope \(profile.name) \(url.origin)\(url.folderPath)",
                "\(path) is under none of the folders the profile \(profile.name) gives \(url.origin) "
                    + "(\(covered.joined(separator: ", "))), so no token of it covers the URL: a manifest or player that names "
                    + "a URL of another folder needs a token for it"
            )
        }
        return nil
    }

    private struct IssuedCookie {
        var credential: HARCredential
        var started: TokenTimestamp?
        var host: String
    }

    /// Each sent credential's fingerprint → the entries that carried it, in time order.
    private func sentIndex(_ timeline: [HARTimelineEntry]) -> [String: [Int]] {
        var index: [String: [Int]] = [:]
        for entry in timeline {
            for credential in entry.sent where index[credential.fingerprint]?.last != entry.number {
                index[credential.fingerprint, default: []].append(entry.number)
            }
        }
        return index
    }

    private func reuseMessage(_ credential: HARCredential, _ carriers: [String: [Int]]) -> String {
        let numbers = carriers[credential.fingerprint] ?? [credential.entry]
        return "the media token \(credential.fingerprint) was sent by \(numbers.map { "#\($0)" }.joined(separator: ", ")): "
            + "a media token is spent once, so a player's retry with the same token is refused (TOKEN_REPLAYED); the player must ask Adobe Pass for a new one"
    }

    /// A media token sent twice whose second use was not refused (a refused one is a refusal above).
    private func reuses(_ timeline: [HARTimelineEntry], already: [HARFinding]) -> [HARFinding] {
        let carriers = sentIndex(timeline)
        let named = Set(already.filter { $0.kind == "TOKEN_REUSED" }.flatMap(\.entries))
        var seen: Set<String> = []
        var findings: [HARFinding] = []
        for entry in timeline {
            for credential in entry.sent where credential.kind == .mediaToken && seen.insert(credential.fingerprint).inserted {
                guard let numbers = carriers[credential.fingerprint], numbers.count > 1, named.isDisjoint(with: numbers) else { continue }
                findings.append(HARFinding(kind: "TOKEN_REUSED", entries: numbers, message: reuseMessage(credential, carriers), isFailure: true))
            }
        }
        return findings
    }

    /// The device's clock against the servers' `Date` headers: the median of
    /// (request start − server date) over the entries that have both. A `Date`
    /// has whole seconds and the answer comes after the request, so only more
    /// than the leeway is said.
    private func clockSkew(_ timeline: [HARTimelineEntry], leeway: Int64) -> HARFinding? {
        let samples = timeline.compactMap { entry -> (Int, Int64)? in
            guard let started = entry.started, let date = entry.serverDate else { return nil }
            return (entry.number, (started.millisecondsSince1970 - date.millisecondsSince1970) / 1000)
        }
        guard !samples.isEmpty else { return nil }
        let skews = samples.map(\.1).sorted()
        let median = skews[skews.count / 2]
        guard abs(median) > leeway else { return nil }
        let timeFailures = timeline.contains { entry in
            entry.credentials.contains { $0.verdict.status == "TOKEN_EXPIRED" || $0.verdict.status == "TOKEN_NOT_YET_VALID" }
        }
        return HARFinding(
            kind: "CLOCK_SKEW",
            entries: samples.filter { abs($0.1 - median) <= max(leeway, 2) }.map(\.0),
            message:
                "the device's clock is \(abs(median)) s \(median > 0 ? "ahead of" : "behind") the servers' (its request times against their Date headers), "
                + "more than the leeway of \(leeway) s: the usual cause of a token \"expired\" or \"not yet valid\" at issue; verdicts judged at "
                + "the servers' time would move by \(median) s",
            isFailure: timeFailures
        )
    }

    /// Sanitized on export: no cookie or `Authorization` anywhere, while requests
    /// that needed a credential were admitted (a media request answered 2xx with
    /// nothing in its URL, or an exchange that handed out cookies).
    private func isSanitized(_ timeline: [HARTimelineEntry]) -> Bool {
        guard !timeline.contains(where: \.showsCookiesOrAuthorization) else { return false }
        let cookieAnswer = timeline.contains { entry in entry.received.contains { $0.place == .responseBody && $0.cookieLifetime != nil } }
        let admittedBare = timeline.contains { ($0.status / 100) == 2 && $0.isMedia && $0.sent.isEmpty }
        let refusedBare = timeline.contains { $0.isRefused && $0.sent.isEmpty }
        return cookieAnswer || (admittedBare && refusedBare) || (admittedBare && timeline.contains { !$0.sent.isEmpty || !$0.received.isEmpty })
    }

    // MARK: The chain

    /// Which media token opened which session and CDN token, and which entries each covered until when.
    private func chain(_ timeline: [HARTimelineEntry]) -> [HARChainLink] {
        let carriers = sentIndex(timeline)
        let refused = Set(timeline.filter(\.isRefused).map(\.number))
        var links: [HARChainLink] = []
        for entry in timeline {
            let issued = entry.received.filter { $0.kind != .mediaToken && $0.kind != .authenticationToken && $0.kind != .authorizationToken }
            let media = entry.sent.first { $0.kind == .mediaToken }
            var listed: Set<String> = []
            // The same token in Set-Cookie and in the answer's body is one link.
            for credential in issued where listed.insert(credential.fingerprint).inserted {
                let covered = (carriers[credential.fingerprint] ?? []).filter { $0 != entry.number }
                // A cookie lives until its token expires or the browser drops it, whichever comes first.
                var until = credential.expires
                if let lifetime = credential.cookieLifetime, let start = entry.started, let dropped = start.adding(milliseconds: lifetime * 1000) {
                    until = until.map { min($0, dropped) } ?? dropped
                }
                links.append(
                    HARChainLink(
                        mediaToken: media?.fingerprint,
                        issuedBy: entry.number,
                        kind: credential.kind,
                        fingerprint: credential.fingerprint,
                        covered: covered,
                        refused: covered.filter { refused.contains($0) },
                        until: until
                    )
                )
            }
        }
        return links
    }
}

/// One credential handed out by an entry, and what it then covered.
package struct HARChainLink: Sendable {
    /// The media token the issuing request carried, when it carried one.
    package var mediaToken: String?
    package var issuedBy: Int
    package var kind: HARCredentialKind
    package var fingerprint: String
    /// Later entries that carried it, in time order, and which of them were refused.
    package var covered: [Int]
    package var refused: [Int]
    package var until: TokenTimestamp?
}

/// The whole report, ready to render.
package struct HARReport: Sendable {
    package var timeline: [HARTimelineEntry]
    package var chain: [HARChainLink]
    package var findings: [HARFinding]
    package var firstTime: TokenTimestamp?

    package var hasFailure: Bool { findings.contains(where: \.isFailure) }
}
