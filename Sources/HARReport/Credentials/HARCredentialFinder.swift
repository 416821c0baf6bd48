import CDNTokens
import EntitlementTokens

/// Finds every credential of an entry and judges each at the entry's
/// `startedDateTime` (docs/DESIGN.md#reading-a-capture): the time the player
/// sent it, not now, so a token that was valid then is valid in the report.
///
/// Where it looks: the request's URL query, its cookies (the raw `Cookie`
/// header, else the HAR's cookie list), a `CTA-Common-Access-Token` header and
/// the session header, other headers and the body for a TV Everywhere token;
/// the answer's `Set-Cookie` lines (raw: HAR writers drop `Max-Age` and
/// `Expires` from their parsed list), `X-Token-Session`, `X-Token-Status`, and its text body (an
/// Adobe Pass answer in JSON or XML, the gate's exchange answer). The CDN
/// tokens are read by the CDN readers of `CDNTokens`, the TV Everywhere tokens
/// by the library's decoder: nothing here reads a token format itself.
package struct HARCredentialFinder {
    package let keys: HARKeys
    private let decoder = TokenDecoder()
    /// What each folder's requests were for, as the entries so far showed it
    /// (a media token's resource, the gate's `X-Token-Resource`): the
    /// resource a session sent to that folder must be bound to.
    private var resourcesByFolder: [String: String] = [:]

    /// The gate's default session carriers (docs/DESIGN.md#playback-sessions).
    static let sessionQuery = "tgs"
    static let sessionCookie = "tokengate_session"
    static let sessionHeader = "x-token-session"

    package init(keys: HARKeys) {
        self.keys = keys
    }

    package mutating func credentials(in entry: HAREntry) -> [HARCredential] {
        var found: [HARCredential] = []
        let time = entry.started
        let url = try? CDNURL(parsing: entry.url)
        let pathURL = url.map { "\($0.origin)\($0.path)" } ?? ""
        // The request: the URL's query.
        let queryPairs = Self.queryPairs(of: entry.url)
        if CDNTokenLocator.showsCDNToken(queryNames: Set(queryPairs.map(\.name))) {
            found.append(cdn(paste: entry.url, place: .query, entry: entry, url: url, values: nil))
        }
        for pair in queryPairs {
            if pair.name == Self.sessionQuery {
                found.append(session(pair.value, name: pair.name, place: .query, entry: entry))
            } else if let token = entitlement(pair.value, name: pair.name, place: .query, entry: entry, time: time) {
                found.append(token)
            }
        }
        // Its cookies, as sent.
        let cookies = Self.requestCookies(entry)
        let cdnCookies = cookies.filter { CDNTokenLocator.carriesToken(name: $0.name, carrier: .cookie) }
        if !cdnCookies.isEmpty {
            let line = cdnCookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
            found.append(cdn(paste: "\(pathURL)\nCookie: \(line)", place: .cookie, entry: entry, url: url, values: cdnCookies.map { $0.value }))
        }
        for cookie in cookies where cookie.name == Self.sessionCookie {
            found.append(session(cookie.value, name: cookie.name, place: .cookie, entry: entry))
        }
        // Its headers.
        for header in entry.requestHeaders {
            let name = header.name.lowercased()
            if name == "cookie" { continue }
            if name == "cta-common-access-token" {
                found.append(
                    cdn(paste: "\(pathURL)\nCTA-Common-Access-Token: \(header.value)", place: .header, entry: entry, url: url, values: [header.value])
                )
            } else if name == Self.sessionHeader {
                found.append(session(header.value, name: header.name, place: .header, entry: entry))
            } else if let token = entitlement(header.value, name: header.name, place: .header, entry: entry, time: time) {
                found.append(token)
            }
        }
        // Its body: form parameters, a JSON object (the exchange's `token`), or the token itself.
        if let post = entry.postData {
            for param in post.params {
                if let token = entitlement(param.value, name: param.name, place: .body, entry: entry, time: time) { found.append(token) }
            }
            if let text = post.text { found += bodyCredentials(text, place: .body, entry: entry, url: url) }
        }
        // The answer: Set-Cookie lines, the gate's status, the body.
        let setCookies = entry.responseHeader("set-cookie").flatMap { $0.split(separator: "\n").map(String.init) }
        var cdnSetCookies: [String] = []
        for line in setCookies {
            let pair = Self.cookiePair(line)
            if pair.name == Self.sessionCookie {
                var credential = session(pair.value, name: pair.name, place: .setCookie, entry: entry)
                credential.cookieLifetime = Self.cookieLifetime(line, at: time)
                found.append(credential)
            } else if CDNTokenLocator.carriesToken(name: pair.name, carrier: .setCookie) {
                cdnSetCookies.append(line)
            }
        }
        if !cdnSetCookies.isEmpty {
            // The URL a cookie is for is where it goes, not the answer that set it: the
            // exchange answer's `url`, else the cookie's own Domain and Path.
            let target = Self.cookieTarget(cdnSetCookies, answer: entry.content?.text) ?? url
            let base = target.map { "\($0.origin)\($0.path)" } ?? pathURL
            let paste = ([base] + cdnSetCookies.map { "Set-Cookie: \($0)" }).joined(separator: "\n")
            var credential = cdn(paste: paste, place: .setCookie, entry: entry, url: target, values: cdnSetCookies.map { Self.cookiePair($0).value })
            let lifetimes = cdnSetCookies.compactMap { Self.cookieLifetime($0, at: time) }
            credential.cookieLifetime = lifetimes.min()
            credential.cookiePath = cdnSetCookies.lazy.compactMap { Self.attribute("path", of: $0) }.first
            credential.cookieDomain = cdnSetCookies.lazy.compactMap { Self.attribute("domain", of: $0) }.first
            found.append(credential)
        }
        // The session the gate handed a player that keeps no cookies (the shipped site exposes the header).
        for value in entry.responseHeader(Self.sessionHeader) {
            found.append(session(value, name: "X-Token-Session", place: .responseHeader, entry: entry))
        }
        if let status = entry.responseHeader("x-token-status").first {
            let reason = entry.responseHeader("x-token-reason").first ?? ""
            found.append(
                HARCredential(
                    kind: .tokenStatus,
                    place: .responseHeader,
                    entry: entry.number,
                    name: "X-Token-Status",
                    values: [],
                    fingerprint: "",
                    verdict: HARVerdict(status: status, reason: reason.isEmpty ? "the gate's answer" : reason),
                    expires: nil
                )
            )
        }
        if let text = entry.content?.text { found += bodyCredentials(text, place: .responseBody, entry: entry, url: url) }
        // The sessions last: what the request was for is known once its media token (or the gate's answer) is read.
        let folder = url.map { "\($0.origin)\($0.folderPath)" }
        var resource =
            entry.responseHeader("x-token-resource").first
            ?? found.first { $0.kind == .mediaToken && $0.place.isSent && $0.resource != nil }?.resource
        if let folder {
            if let resource {
                if resourcesByFolder.count < Self.maximumFolders || resourcesByFolder[folder] != nil { resourcesByFolder[folder] = resource }
            } else {
                resource = resourcesByFolder[folder]
            }
        }
        if found.contains(where: { $0.kind == .session }) {
            let device = entry.requestHeader("x-token-device-id").first
            for index in found.indices where found[index].kind == .session {
                judgeSession(&found[index], entry: entry, resource: resource, deviceID: device)
            }
        }
        return found
    }

    /// The folders (origin and folder path) whose resource an earlier entry
    /// showed, at most this many: a segment's resource is its playlist's.
    static let maximumFolders = 1024

    // MARK: Bodies

    /// A JSON answer's strings (an Adobe Pass `serializedToken`, the exchange's
    /// `token`, `session`, `url` and `cookies`), or an XML token, or a form.
    private func bodyCredentials(_ text: String, place: HARPlace, entry: HAREntry, url: CDNURL?) -> [HARCredential] {
        let trimmed = text.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        var found: [HARCredential] = []
        if trimmed.hasPrefix("{"), let json = try? JSONValue.readObject(Array(text.utf8)) {
            walk(json, name: nil, place: place, entry: entry, found: &found)
            // The gate's exchange answer: the CDN token as cookies for its URL.
            if case .array(let cookies)? = json["cookies"] {
                let pairs = cookies.compactMap { cookie -> HARField? in
                    guard let name = cookie["name"]?.stringValue, let value = cookie["value"]?.stringValue else { return nil }
                    return HARField(name, value)
                }
                let cdnPairs = pairs.filter { CDNTokenLocator.carriesToken(name: $0.name, carrier: .cookie) }
                if !cdnPairs.isEmpty {
                    let target = json["url"]?.stringValue.flatMap { try? CDNURL(parsing: $0) } ?? url
                    let line = cdnPairs.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
                    let base = target.map { "\($0.origin)\($0.path)\n" } ?? ""
                    var credential = cdn(paste: "\(base)Cookie: \(line)", place: place, entry: entry, url: target, values: cdnPairs.map { $0.value })
                    let ages = cookies.compactMap { $0["maxAge"]?.int64.map(Self.clampedLifetime) }
                    credential.cookieLifetime = ages.min()
                    credential.cookiePath = cookies.lazy.compactMap { $0["path"]?.stringValue }.first
                    credential.cookieDomain = cookies.lazy.compactMap { $0["domain"]?.stringValue }.first
                    found.append(credential)
                }
            }
            if let answerURL = json["url"]?.stringValue, let target = try? CDNURL(parsing: answerURL),
                CDNTokenLocator.showsCDNToken(queryNames: Set(Self.queryPairs(of: answerURL).map(\.name)))
            {
                found.append(cdn(paste: answerURL, place: place, entry: entry, url: target, values: nil))
            }
        } else if trimmed.hasPrefix("<") {
            if let token = entitlement(text, name: nil, place: place, entry: entry, time: entry.started) { found.append(token) }
        } else if place == .body {
            for pair in Self.formPairs(text) {
                if let token = entitlement(pair.value, name: pair.name, place: place, entry: entry, time: entry.started) { found.append(token) }
            }
        }
        return found
    }

    private func walk(_ value: JSONValue, name: String?, place: HARPlace, entry: HAREntry, found: inout [HARCredential]) {
        switch value {
        case .object(let members):
            for member in members { walk(member.value, name: member.name, place: place, entry: entry, found: &found) }
        case .array(let elements):
            for element in elements { walk(element, name: name, place: place, entry: entry, found: &found) }
        case .string(let text):
            if name == "session" {
                found.append(session(text, name: name, place: place, entry: entry))
            } else if let token = entitlement(text, name: name, place: place, entry: entry, time: entry.started) {
                found.append(token)
            }
        case .number, .bool, .null:
            break
        }
    }

    // MARK: Each kind

    /// A TV Everywhere token, when `text` has the form of one (an XML
    /// `signatureInfo`, as it is or in Base64 or percent-encoded); judged at `time`.
    private func entitlement(_ text: String, name: String?, place: HARPlace, entry: HAREntry, time: TokenTimestamp?) -> HARCredential? {
        guard Self.looksLikeEntitlementToken(text) else { return nil }
        let decoded: DecodedToken
        do { decoded = try decoder.decode(text) } catch {
            return HARCredential(
                kind: .mediaToken,
                place: place,
                entry: entry.number,
                name: name,
                values: [text],
                fingerprint: HARCredential.fingerprint(of: [text]),
                verdict: HARVerdict(status: "INVALID_TOKEN_FORMAT", reason: error.message),
                expires: nil
            )
        }
        let at = time ?? TokenTimestamp.now()
        let verifier = TokenVerifier(
            signature: keys.tokenKeys.map { .trustedKeys($0) } ?? .insecureSkipped,
            policy: VerificationPolicy(leewayMilliseconds: keys.leewaySeconds * 1000, clock: { at })
        )
        let verdict = verifier.verify(decoded)
        var judged = HARVerdict(status: verdict.status.rawValue, reason: verdict.reason)
        if keys.tokenKeys == nil {
            if verdict.status == .validToken {
                judged = HARVerdict(
                    status: HARVerdict.notChecked,
                    reason: "no key (--key): signature not checked; in its lifetime at the entry's time"
                )
            } else {
                judged.reason += " (signature not checked: no key)"
            }
        }
        if time == nil { judged = HARVerdict(status: HARVerdict.notChecked, reason: "the entry has no time to judge it at") }
        return HARCredential(
            kind: HARCredentialKind(decoded.token.kind),
            place: place,
            entry: entry.number,
            name: name,
            values: [text],
            fingerprint: HARCredential.fingerprint(of: [text]),
            verdict: judged,
            expires: decoded.token.expiresAt,
            resource: decoded.token.kind == .media ? (decoded.mediaRSS?.channelTitle ?? Self.resourceID(of: decoded.token)) : nil
        )
    }

    private static func resourceID(of token: EntitlementToken) -> String? {
        if case .media(let media) = token { return media.resourceID }
        return nil
    }

    /// A CDN token read from `paste` by the CDN readers, judged at the entry's
    /// time against its URL with the kind's profile; by time only without one.
    private func cdn(paste: String, place: HARPlace, entry: HAREntry, url: CDNURL?, values: [String]?) -> HARCredential {
        let reading: CDNReading
        do { reading = try CDNReading(text: paste) } catch {
            let shown = values ?? [paste]
            return HARCredential(
                kind: .unreadableCDNToken,
                place: place,
                entry: entry.number,
                name: nil,
                values: shown,
                fingerprint: HARCredential.fingerprint(of: shown),
                verdict: HARVerdict(status: error.status.rawValue, reason: error.reason),
                expires: nil
            )
        }
        let kind: HARCredentialKind =
            switch reading.kind {
            case .akamai: .akamai
            case .cloudfront: .cloudfront
            case .cat: .cat
            case .nginxSecureLink: .nginxSecureLink
            }
        let tokenValues = values ?? Self.queryPairs(of: paste).filter { Self.isTokenPair($0, of: reading) }.map(\.value)
        let expires = reading.expires.flatMap { seconds -> TokenTimestamp? in
            let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
            return overflow ? nil : TokenTimestamp(millisecondsSince1970: milliseconds)
        }
        var verdict: HARVerdict
        if let time = entry.started {
            let seconds = time.millisecondsSince1970 / 1000
            if case .cat(let cat) = reading.token, !keys.catKeys.isEmpty {
                verdict = judgeCAT(cat, at: seconds, entry: entry, place: place, url: url)
            } else if let profile = keys.profile(for: reading.kind) {
                let facts = CDNRequestFacts(
                    url: place.isSent ? url : nil,
                    now: seconds,
                    method: entry.method.uppercased(),
                    leeway: keys.leewaySeconds
                )
                do {
                    try profile.verify(reading: reading, facts: facts)
                    verdict = HARVerdict(status: "VALID_TOKEN", reason: "verified with the profile \(profile.name)")
                } catch {
                    verdict = HARVerdict(status: error.status.rawValue, reason: error.reason)
                }
            } else if let end = reading.expires, end < seconds - keys.leewaySeconds {
                // The entry's time is a bounded timestamp; a token's own figures may be anything.
                let early = end.subtractingReportingOverflow(seconds).overflow ? "long" : "\(seconds - end) s"
                verdict = HARVerdict(
                    status: "TOKEN_EXPIRED",
                    reason: "expired \(early) before the entry's time (signature not checked: no --profile for \(reading.kind.rawValue))"
                )
            } else if let start = reading.notBefore, start > seconds + keys.leewaySeconds {
                let late = start.subtractingReportingOverflow(seconds).overflow ? "long" : "\(start - seconds) s"
                verdict = HARVerdict(
                    status: "TOKEN_NOT_YET_VALID",
                    reason: "valid only \(late) after the entry's time (signature not checked: no --profile for \(reading.kind.rawValue))"
                )
            } else {
                verdict = HARVerdict(
                    status: HARVerdict.notChecked,
                    reason:
                        "no \(reading.kind == .cat ? "--cat-key or --profile" : "--profile") for \(reading.kind.rawValue): signature and scope not checked; in its lifetime at the entry's time"
                )
            }
        } else {
            verdict = HARVerdict(status: HARVerdict.notChecked, reason: "the entry has no time to judge it at")
        }
        let shown = tokenValues.isEmpty ? [paste] : tokenValues
        return HARCredential(
            kind: kind,
            place: place,
            entry: entry.number,
            name: reading.tokenName,
            values: shown,
            fingerprint: HARCredential.fingerprint(of: shown),
            verdict: verdict,
            expires: expires
        )
    }

    /// A Common Access Token with `--cat-key`, judged as the gate's origin
    /// check judges it (docs/DESIGN.md#cat-at-the-origin): the MAC or
    /// signature, the times at the entry's time with the leeway, and `catu`
    /// and `catm` against the URL and method it was sent with (the URL
    /// without its own `cat` parameter). A CAT handed out in an answer is
    /// judged without a URL: where it will be sent is not this entry's.
    /// `aud` is not judged (the capture does not say which audience the
    /// origin answers as; the reason says so when the token has one). A
    /// `catnip` is refused as the gate refuses it without the proxy's client
    /// address: a HAR has none.
    private func judgeCAT(_ cat: UnverifiedCommonAccessToken, at seconds: Int64, entry: HAREntry, place: HARPlace, url: CDNURL?) -> HARVerdict {
        var facts = CDNRequestFacts(now: seconds, method: entry.method.uppercased(), leeway: keys.leewaySeconds)
        if place.isSent, cat.token.uriRestriction != nil {
            let uri = entry.url.prefix { $0 != "#" }
            let target = CATURIRestriction.uri(withoutParameter: "cat", of: uri)
            guard let judged = try? CDNURL(parsing: target) else {
                return HARVerdict(status: "INVALID_REQUEST", reason: "catu restricts the URI, and the entry's URL cannot be read as one URL")
            }
            facts.url = judged
        }
        var notes: [String] = []
        let audience = cat.token.audience?.first
        if audience != nil { notes.append("aud not judged") }
        do {
            let verified = try cat.verify(keys: keys.catKeys, facts: facts, expectedIssuer: nil, expectedAudience: audience)
            var reason = "verified with --cat-key \(verified.keyID ?? "(no kid)")"
            if !place.isSent { reason += " (handed out: its scope is judged where it is sent)" }
            if !notes.isEmpty { reason += "; " + notes.joined(separator: "; ") }
            return HARVerdict(status: "VALID_TOKEN", reason: reason)
        } catch {
            return HARVerdict(status: error.status.rawValue, reason: error.reason)
        }
    }

    /// A playback session, found; judged by ``judgeSession(_:entry:resource:deviceID:)``
    /// once the whole entry is read.
    private func session(_ value: String, name: String?, place: HARPlace, entry: HAREntry) -> HARCredential {
        HARCredential(
            kind: .session,
            place: place,
            entry: entry.number,
            name: name,
            values: [value],
            fingerprint: HARCredential.fingerprint(of: [value]),
            verdict: HARVerdict(status: HARVerdict.notChecked, reason: "a tokengate session is followed, not checked: no --session-secret"),
            expires: nil
        )
    }

    /// A playback session with the gate's secrets (`--session-secret`),
    /// verified by the gate's own code (``PlaybackSessionSecrets``): its form,
    /// version and tag, its expiry at the entry's time (with the leeway, as
    /// every other time here), and what it binds where the capture decides
    /// it: the resource when the request carried a media token (its resource),
    /// its answer named one (`X-Token-Resource`), or an earlier request to the
    /// same folder showed one of those (a segment's resource is its
    /// playlist's), the device when the
    /// request names one (`X-Token-Device-Id`). A session handed out is judged
    /// for its tag and time only. The requestor and the admitting key are the
    /// gate's configuration, not the capture's: not judged.
    private func judgeSession(_ credential: inout HARCredential, entry: HAREntry, resource: String?, deviceID: String?) {
        guard let secrets = keys.sessionSecrets else { return }
        let session: PlaybackSession
        switch secrets.open(credential.values[0][...].utf8) {
        case .success(let opened): session = opened
        case .failure(let refusal):
            credential.verdict = HARVerdict(status: "INVALID_SESSION", reason: refusal.reason)
            return
        }
        guard let expires = session.expires else {
            credential.verdict = HARVerdict(status: "INVALID_SESSION", reason: "the session credential's expiry is out of range")
            return
        }
        credential.expires = expires
        if credential.place.isSent {
            if let resource, !session.isBound(toResource: resource) {
                credential.verdict = HARVerdict(
                    status: "INVALID_SESSION",
                    reason: "the session was made for another resource than this request's (\(resource))"
                )
                return
            }
            if let deviceID, session.isDeviceBound, !session.isBound(toDevice: deviceID) {
                credential.verdict = HARVerdict(status: "DEVICE_MISMATCH", reason: "the session is bound to another device")
                return
            }
        }
        guard let time = entry.started else {
            credential.verdict = HARVerdict(status: HARVerdict.notChecked, reason: "its tag verifies; the entry has no time to judge it at")
            return
        }
        let seconds = time.millisecondsSince1970 / 1000
        let end = session.expiryMilliseconds / 1000
        if end < seconds - keys.leewaySeconds {
            credential.verdict = HARVerdict(
                status: "SESSION_EXPIRED",
                reason: "the playback session expired at \(expires.iso8601), \(seconds - end) s before the entry's time"
            )
            return
        }
        var bound: String
        if !session.isResourceBound {
            bound = "bound to no resource"
        } else if let resource, credential.place.isSent {
            bound = "bound to this request's resource (\(resource))"
        } else {
            bound = "bound to a resource this entry does not name (not judged)"
        }
        if session.isDeviceBound { bound += deviceID != nil && credential.place.isSent ? " and this device" : " and a device" }
        credential.verdict = HARVerdict(
            status: "VALID_SESSION",
            reason: "its tag verifies with --session-secret; valid until \(expires.iso8601); \(bound)"
        )
    }

    // MARK: Text

    /// The cheap test before the decoder: a token's XML starts with `<signatureInfo`
    /// (or an XML declaration), as it is, in Base64, or percent-encoded.
    static func looksLikeEntitlementToken(_ text: String) -> Bool {
        let trimmed = text.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        for prefix in ["<signatureInfo", "<?xml", "PHNpZ25hdHVyZUluZm8", "%3CsignatureInfo", "%3csignatureInfo", "PD94bWw"]
        where trimmed.hasPrefix(prefix) {
            return prefix != "<?xml" || trimmed.contains("signatureInfo")
        }
        return false
    }

    /// The name=value pairs of a URL's query, values as written.
    static func queryPairs(of url: String) -> [HARField] {
        guard let start = url.firstIndex(of: "?") else { return [] }
        var query = url[url.index(after: start)...]
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        return formPairs(String(query))
    }

    static func formPairs(_ text: String) -> [HARField] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { part in
            guard let equals = part.firstIndex(of: "=") else { return HARField(String(part), "") }
            return HARField(String(part[..<equals]), String(part[part.index(after: equals)...]))
        }
    }

    private static func isTokenPair(_ pair: HARField, of reading: CDNReading) -> Bool {
        switch reading.kind {
        case .akamai, .cat: pair.name == reading.tokenName
        case .cloudfront: ["Policy", "Signature", "Key-Pair-Id", "Expires"].contains(pair.name)
        case .nginxSecureLink: pair.name == "md5" || pair.name == "expires"
        }
    }

    /// The cookies sent: the raw `Cookie` header when the HAR kept it, else its parsed list.
    static func requestCookies(_ entry: HAREntry) -> [HARField] {
        let headers = entry.requestHeader("cookie")
        guard !headers.isEmpty else { return entry.requestCookies }
        return headers.flatMap { line in
            line.split(separator: ";").map { part in
                let trimmed = part.drop { $0 == " " }
                guard let equals = trimmed.firstIndex(of: "=") else { return HARField(String(trimmed), "") }
                return HARField(String(trimmed[..<equals]), String(trimmed[trimmed.index(after: equals)...]))
            }
        }
    }

    /// A `Set-Cookie` line's name and value.
    static func cookiePair(_ line: String) -> HARField {
        let first = line.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let trimmed = first.drop { $0 == " " }
        guard let equals = trimmed.firstIndex(of: "=") else { return HARField(String(trimmed), "") }
        return HARField(String(trimmed[..<equals]), String(trimmed[trimmed.index(after: equals)...]))
    }

    /// Where `Set-Cookie` lines send their cookies: the answer's `url` (the gate's
    /// exchange names it), else `https://<Domain><Path>` of the first line that has both.
    static func cookieTarget(_ lines: [String], answer: String?) -> CDNURL? {
        if let answer, answer.utf8.count <= 64 * 1024, let json = try? JSONValue.readObject(Array(answer.utf8)),
            let text = json["url"]?.stringValue, let target = try? CDNURL(parsing: text)
        {
            return target
        }
        for line in lines {
            guard let domain = attribute("domain", of: line), let path = attribute("path", of: line) else { continue }
            let host = domain.hasPrefix(".") ? String(domain.dropFirst()) : domain
            if let target = try? CDNURL(parsing: "https://\(host)\(path)") { return target }
        }
        return nil
    }

    /// A `Set-Cookie` attribute's value (`Path`, `Domain`, `Max-Age`, `Expires`), names case-insensitive.
    static func attribute(_ name: String, of line: String) -> String? {
        for part in line.split(separator: ";").dropFirst() {
            let trimmed = part.drop { $0 == " " }
            guard let equals = trimmed.firstIndex(of: "=") else { continue }
            if trimmed[..<equals].lowercased() == name { return String(trimmed[trimmed.index(after: equals)...]) }
        }
        return nil
    }

    /// The lifetime a `Set-Cookie` line gave, in seconds from `time`: `Max-Age`
    /// wins over `Expires` (RFC 6265 §5.3); nil for a session cookie.
    static func cookieLifetime(_ line: String, at time: TokenTimestamp?) -> Int64? {
        if let age = attribute("max-age", of: line), let seconds = Int64(age) { return clampedLifetime(seconds) }
        if let expires = attribute("expires", of: line), let end = HTTPDate.parse(expires), let time {
            return clampedLifetime(end.millisecondsSince1970 / 1000 - time.millisecondsSince1970 / 1000)
        }
        return nil
    }

    /// Browsers keep a cookie at most 400 days (RFC 6265bis §5.5), and one whose
    /// lifetime is not positive not at all.
    static func clampedLifetime(_ seconds: Int64) -> Int64 {
        min(max(seconds, 0), 400 * 86_400)
    }
}
