import EntitlementTokens

/// What a profile is when its keys are loaded: the settings, the keys in
/// their order (the first signs; every one verifies, so a new key can be
/// added before it signs), and the lifetime and leeway it issues with.
/// docs/CDN.md describes the settings; docs/DESIGN.md#the-cdn-exchange why.
public struct CDNProfile: Sendable {
    public let settings: CDNProfileSettings
    /// Seconds a token issued here lives.
    public let lifetime: Int64
    /// Seconds an edge's clock may run behind (`st`, `nbf`).
    public let leeway: Int64
    /// `cat`: the `catr` every token carries (docs/CDN.md#renewal-catr); nil: none.
    public let renewal: CATRenewal?
    let keys: Keys

    enum Keys: Sendable {
        case akamai([EdgeAuthKey])
        case cloudfront(signers: [CloudFrontIssuer], verifiers: [String: PublicKey])
        case cat([CATKey])
        case secureLink(expression: SecureLinkExpression, secrets: [[UInt8]])
    }

    public var name: String { settings.name }
    public var kind: CDNTokenKind { settings.kind }

    /// The cookie or parameter name the token travels under (the kind's own
    /// when the profile sets none; CloudFront's names are fixed).
    public var tokenName: String {
        if let name = settings.tokenName { return name }
        switch kind {
        case .akamai: return "__token__"
        case .cat: return "cat"
        case .nginxSecureLink: return SecureLinkToken.defaultTokenName
        case .cloudfront: return "CloudFront"
        }
    }

    /// The header a CAT travels in (header carrier).
    public static let catHeader = "CTA-Common-Access-Token"

    /// Loads the keys `settings` name; `read` gives a key file's bytes and
    /// throws with the path it tried. Every resource is issued for once, at a
    /// fixed time, so a URL the format would have to escape is refused here,
    /// at configuration, never at a viewer's request.
    public init(
        settings: CDNProfileSettings,
        defaults: CDNProfileDefaults,
        read: (String) throws(CDNProfileError) -> [UInt8]
    ) throws(CDNProfileError) {
        self.settings = settings
        lifetime = settings.lifetime ?? defaults.lifetime
        leeway = defaults.leeway
        guard lifetime >= 1, lifetime <= CDNProfileSettings.maximumLifetime else {
            throw CDNProfileError("\(settings.source): a lifetime of \(lifetime) s (1 to \(CDNProfileSettings.maximumLifetime))")
        }
        renewal = settings.renewal?.renewal(lifetime: lifetime)
        if let renewal, renewal.deadline >= renewal.expAdd {
            throw CDNProfileError(
                "\(settings.source): renewal-deadline \(renewal.deadline) s is not less than the renewal-exp-add of \(renewal.expAdd) s "
                    + "(the lifetime, when renewal-exp-add is not set): a renewed token would be due for renewal at once"
            )
        }
        func failed(_ line: CDNProfileSettings.KeyLine, _ refusal: CDNRefusal) -> CDNProfileError {
            CDNProfileError("\(settings.source): key \(CDNProfileSettings.printable(line.path)): \(refusal.reason)")
        }
        switch settings.kind {
        case .akamai:
            var keys: [EdgeAuthKey] = []
            for line in settings.keys {
                let text = String(decoding: try read(line.path), as: UTF8.self)
                do { keys.append(try EdgeAuthKey(hex: text)) } catch { throw failed(line, error) }
            }
            self.keys = .akamai(keys)
        case .cloudfront:
            var signers: [CloudFrontIssuer] = []
            var verifiers: [String: PublicKey] = [:]
            for line in settings.keys {
                let id = line.id ?? ""
                let bytes = try read(line.path)
                do {
                    let key = try SigningKey(bytes: bytes, source: line.path)
                    signers.append(try CloudFrontIssuer(key: key, keyPairID: id))
                    guard verifiers.updateValue(key.publicKey, forKey: id) == nil else {
                        throw CDNProfileError("\(settings.source): the Key-Pair-Id \(CDNProfileSettings.printable(id)) is given twice")
                    }
                } catch let error as KeyError {
                    throw CDNProfileError("\(settings.source): key \(CDNProfileSettings.printable(line.path)): \(error.message)")
                } catch let error as CDNRefusal {
                    throw failed(line, error)
                } catch let error as CDNProfileError {
                    throw error
                } catch {
                    throw CDNProfileError("\(settings.source): key \(CDNProfileSettings.printable(line.path)): \(error)")
                }
            }
            self.keys = .cloudfront(signers: signers, verifiers: verifiers)
        case .cat:
            var keys: [CATKey] = []
            for line in settings.keys {
                let bytes = try read(line.path)
                do { keys.append(try CATKey(keyFile: bytes, id: line.id, source: line.path)) } catch { throw failed(line, error) }
            }
            if !keys[0].canIssue {
                throw CDNProfileError(
                    "\(settings.source): the first key of a cat profile signs: \(CDNProfileSettings.printable(settings.keys[0].path)) is a public key"
                )
            }
            self.keys = .cat(keys)
        case .nginxSecureLink:
            let expression: SecureLinkExpression
            do { expression = try SecureLinkExpression(parsing: settings.secureLinkMD5 ?? "") } catch {
                throw CDNProfileError("\(settings.source): secure-link-md5: \(error.reason)")
            }
            do { try expression.checkConfiguration(scope: settings.scope, bindsIP: settings.bindIP) } catch {
                throw CDNProfileError("\(settings.source): secure-link-md5: \(error.reason)")
            }
            var secrets: [[UInt8]] = []
            for line in settings.keys {
                let secret = SecretFileBytes.secret(of: try read(line.path))
                guard secret.count >= SecretFileBytes.minimumCount else {
                    throw CDNProfileError(
                        "\(settings.source): key \(CDNProfileSettings.printable(line.path)): the secret holds \(secret.count) bytes "
                            + "(a text file loses its trailing newline); at least \(SecretFileBytes.minimumCount) are needed (e.g. `openssl rand -hex 32`)"
                    )
                }
                secrets.append(secret)
            }
            self.keys = .secureLink(expression: expression, secrets: secrets)
        }
        for resource in settings.resources {
            do {
                _ = try issue(resource: resource.id, now: 1_767_225_600, clientIP: settings.bindIP ? "192.0.2.1" : nil, requestor: "requestor")
            } catch {
                throw CDNProfileError("\(settings.source): resource \(CDNProfileSettings.printable(resource.id)) (\(resource.url)): \(error.reason)")
            }
        }
    }

    /// What the exchange hands a viewer of `resource` at `now` (seconds since
    /// 1970): the token made with the first key, carried as the profile says.
    /// `requestor` is a CAT's `iss` when the profile sets no issuer.
    public func issue(resource: String, now: Int64, clientIP: String?, requestor: String?) throws(CDNRefusal) -> CDNGrant {
        guard let url = settings.url(of: resource) else { throw .format("the profile \(name) has no URL for the resource \(resource)") }
        let parameters = CDNIssueParameters(
            url: url,
            scope: settings.scope,
            now: now,
            lifetime: lifetime,
            leeway: leeway,
            clientIP: settings.bindIP ? clientIP : nil
        )
        if settings.bindIP, clientIP == nil { throw .format("the profile \(name) binds the viewer's IP, and none was given") }
        let (pairs, signedURL) = try tokenPairs(parameters, requestor: requestor, forCookies: settings.carrier == .cookie)
        var cookies: [CDNCookie] = []
        var headers: [CDNField] = []
        var playURL = url.description
        switch settings.carrier {
        case .cookie:
            for pair in pairs {
                guard pair.value.utf8.allSatisfy(Self.isCookieOctet) else {
                    throw .format("the \(pair.name) value holds a byte a cookie cannot carry")
                }
                cookies.append(
                    CDNCookie(
                        name: pair.name,
                        value: pair.value,
                        domain: settings.cookieDomain ?? url.host,
                        path: url.folderPath,
                        maxAge: lifetime,
                        secure: url.scheme == "https",
                        sameSite: settings.sameSite == .none ? "None" : "Lax"
                    )
                )
            }
        // A manifest profile's exchange answers the gate's manifest route,
        // which the gate writes; here it is issued as the query carrier is.
        case .query, .manifest:
            if let signedURL {
                playURL = signedURL
            } else {
                guard pairs.allSatisfy({ $0.value.utf8.allSatisfy(Self.isQueryValueByte) }) else {
                    throw .format("the token holds a byte a query cannot carry unescaped")
                }
                playURL += (url.query == nil ? "?" : "&") + pairs.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
            }
        case .header:
            headers = pairs.map { CDNField(Self.catHeader, $0.value) }
        }
        return CDNGrant(profile: name, kind: kind, url: playURL, expires: parameters.expires, cookies: cookies, headers: headers)
    }

    /// The CDN token a manifest carries for the folder of `resource`
    /// (docs/DESIGN.md#tokens-inside-manifests): the pairs a query holds,
    /// under the profile's names (`__token__` or the token name; CloudFront's
    /// `Policy`, `Signature`, `Key-Pair-Id` with a custom policy on the folder's
    /// wildcard; `cat`; secure_link's `md5` and `expires`), living `lifetime`
    /// seconds from `now` (the manifest's own rule,
    /// ``ParsedManifest/tokenLifetime(profileLifetime:secondsUntilSessionEnd:)``).
    /// Whatever the profile's scope, one token covers the folder: every file a
    /// manifest names there is fetched with it.
    public func queryToken(
        resource: String,
        now: Int64,
        lifetime: Int64,
        clientIP: String?,
        requestor: String?
    ) throws(CDNRefusal) -> (fields: [CDNField], expires: Int64) {
        guard let url = settings.url(of: resource) else { throw .format("the profile \(name) has no URL for the resource \(resource)") }
        guard lifetime >= 1 else { throw .format("a token lifetime of \(lifetime) s") }
        if settings.bindIP, clientIP == nil { throw .format("the profile \(name) binds the viewer's IP, and none was given") }
        let parameters = CDNIssueParameters(
            url: url,
            scope: .folder,
            now: now,
            lifetime: lifetime,
            leeway: leeway,
            clientIP: settings.bindIP ? clientIP : nil
        )
        let (pairs, _) = try tokenPairs(parameters, requestor: requestor, forCookies: false)
        return (pairs, parameters.expires)
    }

    /// The names ``queryToken(resource:now:lifetime:clientIP:requestor:)`` writes,
    /// which a manifest's own queries must not hold already (``ManifestScope/tokenNames``).
    public var queryTokenNames: [String] {
        switch kind {
        case .akamai, .cat: return [tokenName]
        case .cloudfront: return CloudFrontToken.parameters
        case .nginxSecureLink: return [SecureLinkToken.md5Name, SecureLinkToken.expiresName]
        }
    }

    /// The token made with the first key, as name/value pairs: a cookie
    /// carrier's, or a query's (with CloudFront's signed URL beside).
    private func tokenPairs(
        _ parameters: CDNIssueParameters,
        requestor: String?,
        forCookies: Bool
    ) throws(CDNRefusal) -> (pairs: [CDNField], signedURL: String?) {
        switch keys {
        case .akamai(let keys):
            return ([CDNField(tokenName, try EdgeAuthIssuer.issue(parameters, key: keys[0]).text)], nil)
        case .cloudfront(let signers, _):
            let issued = try signers[0].issue(parameters)
            return (forCookies ? issued.cookies : issued.token.pairs, issued.signedURL)
        case .cat(let keys):
            // iss: the profile's issuer, else the requestor id, as the gate signs it; never a guess.
            guard let issuer = settings.issuer ?? requestor else {
                throw .format("the CAT profile \(name) sets no issuer, and no requestor id was given for the iss claim")
            }
            return (
                [
                    CDNField(
                        tokenName,
                        try CommonAccessTokenIssuer.issue(parameters, issuer: issuer, audience: settings.audience, renewal: renewal, key: keys[0])
                    )
                ], nil
            )
        case .secureLink(let expression, let secrets):
            let token = try SecureLinkIssuer.issue(parameters, expression: expression, secret: secrets[0])
            return (forCookies ? try token.cookies(tokenName: tokenName) : token.fields, nil)
        }
    }

    /// RFC 6265 §4.1.1 cookie-octet: printable ASCII but `"`, `,`, `;`, `\` and space.
    static func isCookieOctet(_ byte: UInt8) -> Bool {
        byte >= 0x21 && byte <= 0x7E && byte != 0x22 && byte != 0x2C && byte != 0x3B && byte != 0x5C
    }

    /// RFC 3986 query characters a value may hold as they are: not `&`,
    /// `#`, `+` or `%`, which a reader would split on or decode.
    static func isQueryValueByte(_ byte: UInt8) -> Bool {
        byte.isASCIILetterOrDigit || "-._~!$'()*,;=:@/".utf8.contains(byte)
    }
}

/// What a profile takes from the gate (or `tokeninspect`) when it does not say.
public struct CDNProfileDefaults: Sendable, Hashable {
    /// Seconds; the gate's session lifetime, at most a day.
    public var lifetime: Int64
    /// Seconds; the gate's `--leeway`.
    public var leeway: Int64

    public init(lifetime: Int64, leeway: Int64) {
        self.lifetime = lifetime
        self.leeway = leeway
    }
}
