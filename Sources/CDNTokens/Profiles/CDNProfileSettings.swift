import EntitlementTokens

/// One profile file as written: `name = value` lines, the names of the table
/// in docs/CDN.md and no others, `key` and `resource` repeatable, `#` comment
/// lines. Read before anything is loaded, so every mistake in the text is
/// reported with its line, and no file is opened for a profile that is
/// wrong anyway. Loading the keys is ``CDNProfile``'s business.
public struct CDNProfileSettings: Sendable, Hashable {
    /// A `key = FILE [ID]` line.
    public struct KeyLine: Sendable, Hashable {
        public var path: String
        public var id: String?
    }

    /// A `resource = RESOURCE-ID URL` line.
    public struct ResourceLine: Sendable, Hashable {
        public var id: String
        public var url: CDNURL
    }

    public enum Carrier: String, Sendable, Hashable, CaseIterable {
        /// `manifest`: the token travels inside the manifests the gate rewrites
        /// per viewer (docs/DESIGN.md#tokens-inside-manifests), for players that keep no cookies.
        case cookie, query, header, manifest
    }

    public enum SameSite: String, Sendable, Hashable, CaseIterable {
        case lax, none
    }

    public var source: String
    public var name: String
    public var kind: CDNTokenKind
    public var keys: [KeyLine]
    public var resources: [ResourceLine]
    public var scope: CDNScope
    public var allowHostScopeInsecure: Bool
    public var carrier: Carrier
    public var cookieDomain: String?
    public var sameSite: SameSite
    public var tokenName: String?
    public var issuer: String?
    /// `cat`: the `aud` issued tokens carry and read-back tokens must name (nil: none written, and a token with one refused).
    public var audience: String?
    /// Seconds; nil: the gate's session lifetime.
    public var lifetime: Int64?
    public var bindIP: Bool
    public var ipHeader: String
    public var secureLinkMD5: String?
    /// `carrier = manifest`: the base URL the manifests are fetched from (the
    /// request's path appended), `http(s)://`, without a query; nil otherwise.
    public var manifestOrigin: CDNURL?
    /// `carrier = manifest`: the largest manifest read from the origin.
    public var manifestMaxBytes: Int
    /// `cat`: the `catr` claim to write (`renewal`, `renewal-*`); nil: none.
    public var renewal: CATRenewalSetting?

    /// Every name a profile may set.
    public static let names: [String] = [
        "name", "kind", "key", "resource", "scope", "allow-host-scope-insecure", "carrier", "cookie-domain",
        "same-site", "token-name", "issuer", "audience", "lifetime", "bind-ip", "ip-header", "secure-link-md5",
        "manifest-origin", "manifest-max-bytes",
    ]
    /// `manifest-max-bytes` unless set: 4 MiB, more than a day of a live playlist's segments.
    public static let defaultManifestMaxBytes = 4 << 20
    /// The bounds of `manifest-max-bytes`.
    public static let manifestMaxBytesRange = 1024...(64 << 20)
    /// The longest lifetime a profile may give a CDN token: a day.
    public static let maximumLifetime: Int64 = 86_400
    /// A profile is a few lines; a larger file is a mistake (a key given by accident).
    public static let maximumBytes = 64 * 1024
    /// Enough resources for a large channel line-up, and a bound on what one file costs.
    public static let maximumResources = 10_000

    /// Reads the profile text of the file `source` (named in every error).
    public init(text: String, source: String) throws(CDNProfileError) {
        guard text.utf8.count <= Self.maximumBytes else {
            throw CDNProfileError("\(source): \(text.utf8.count) bytes; a profile is at most \(Self.maximumBytes)")
        }
        var single: [String: (value: String, line: Int)] = [:]
        var keys: [KeyLine] = []
        var resources: [ResourceLine] = []
        var resourceIDs: Set<String> = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let place = "\(source):\(index + 1)"
            let line = Self.trimmed(rawLine)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else { throw CDNProfileError("\(place): expected `name = value`") }
            let name = Self.trimmed(line[..<equals])
            var value = Self.trimmed(line[line.index(after: equals)...])
            if value.utf8.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard Self.allNames.contains(name) else {
                throw CDNProfileError(
                    "\(place): '\(Self.printable(name))' is not a profile setting (one of: \(Self.allNames.joined(separator: ", ")))"
                )
            }
            guard !value.isEmpty else { throw CDNProfileError("\(place): \(name) has no value") }
            guard value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
                throw CDNProfileError("\(place): the value of \(name) holds a control character")
            }
            switch name {
            case "key":
                let words = value.split(separator: " ", omittingEmptySubsequences: true)
                guard words.count == 1 || words.count == 2 else { throw CDNProfileError("\(place): key takes FILE [ID]") }
                if words.count == 2 { try Self.checkKeyID(String(words[1]), place) }
                keys.append(KeyLine(path: String(words[0]), id: words.count == 2 ? String(words[1]) : nil))
            case "resource":
                let words = value.split(separator: " ", omittingEmptySubsequences: true)
                guard words.count == 2 else { throw CDNProfileError("\(place): resource takes RESOURCE-ID URL") }
                let id = String(words[0])
                guard resourceIDs.insert(id).inserted else { throw CDNProfileError("\(place): the resource \(Self.printable(id)) is named twice") }
                guard resources.count < Self.maximumResources else { throw CDNProfileError("\(place): more than \(Self.maximumResources) resources") }
                let url: CDNURL
                do { url = try CDNURL(parsing: String(words[1])) } catch {
                    throw CDNProfileError("\(place): the URL of \(Self.printable(id)): \(error.reason)")
                }
                // One spelling in the configuration: what is issued is what every scope is judged by.
                guard url.path == url.scopePath else {
                    throw CDNProfileError(
                        "\(place): the URL of \(Self.printable(id)) escapes a letter, digit, '-', '.', '_' or '~'; write it as \(url.scopePath)"
                    )
                }
                resources.append(ResourceLine(id: id, url: url))
            default:
                if let earlier = single[name] { throw CDNProfileError("\(place): \(name) is set twice (first on line \(earlier.line))") }
                single[name] = (value, index + 1)
            }
        }
        func place(_ name: String) -> String { single[name].map { "\(source):\($0.line)" } ?? source }
        func flag(_ name: String) throws(CDNProfileError) -> Bool {
            switch single[name]?.value {
            case nil, "false": return false
            case "true": return true
            default: throw CDNProfileError("\(place(name)): \(name) takes true or false")
            }
        }

        guard let name = single["name"]?.value else { throw CDNProfileError("\(source): no name (name = a unique name of letters, digits and '-')") }
        guard name.utf8.count <= 64, name.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") }) else {
            throw CDNProfileError("\(place("name")): the name '\(Self.printable(name))' is not letters, digits and '-' (at most 64)")
        }
        guard let kindText = single["kind"]?.value else {
            throw CDNProfileError("\(source): no kind (\(CDNTokenKind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        guard let kind = CDNTokenKind(rawValue: kindText) else {
            throw CDNProfileError(
                "\(place("kind")): kind '\(Self.printable(kindText))' is not one of \(CDNTokenKind.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        guard !keys.isEmpty else { throw CDNProfileError("\(source): no key (key = FILE [ID]; the first signs, every one verifies)") }
        if kind == .cloudfront || kind == .cat, let missing = keys.first(where: { $0.id == nil }) {
            let what = kind == .cloudfront ? "its Key-Pair-Id" : "its kid"
            throw CDNProfileError("\(source): key \(Self.printable(missing.path)) needs \(what): key = FILE ID")
        }
        guard !resources.isEmpty else { throw CDNProfileError("\(source): no resource (resource = RESOURCE-ID URL)") }

        var scope = CDNScope.folder
        if let text = single["scope"]?.value {
            guard let value = CDNScope(rawValue: text) else { throw CDNProfileError("\(place("scope")): scope takes folder or url") }
            scope = value
        }
        let allowHostScope = try flag("allow-host-scope-insecure")
        if scope == .folder, !allowHostScope, let whole = resources.first(where: { $0.url.folderPath == "/" }) {
            throw CDNProfileError(
                "\(source): the folder of \(Self.printable(whole.id)) (\(whole.url)) is the whole host; "
                    + "give the resource its own folder, or set allow-host-scope-insecure = true"
            )
        }
        var carrier = Carrier.cookie
        if let text = single["carrier"]?.value {
            guard let value = Carrier(rawValue: text) else {
                throw CDNProfileError("\(place("carrier")): carrier takes cookie, query, header or manifest")
            }
            carrier = value
        }
        if carrier == .header, kind != .cat { throw CDNProfileError("\(place("carrier")): the header carrier is for kind cat only") }

        // One token per manifest response must cover every file of the folder.
        if carrier == .manifest, scope != .folder {
            throw CDNProfileError("\(place("carrier")): carrier = manifest needs scope = folder: one token covers every file a manifest names")
        }
        var manifestOrigin: CDNURL? = nil
        if let text = single["manifest-origin"]?.value {
            guard carrier == .manifest else { throw CDNProfileError("\(place("manifest-origin")): manifest-origin is for carrier = manifest only") }
            let url: CDNURL
            do { url = try CDNURL(parsing: text) } catch {
                throw CDNProfileError("\(place("manifest-origin")): \(error.reason)")
            }
            guard url.query == nil, !text.contains("#"), !text.contains("@") else {
                throw CDNProfileError(
                    "\(place("manifest-origin")): a base URL without a query, a fragment or credentials (the request's path is appended to it)"
                )
            }
            manifestOrigin = url
        } else if carrier == .manifest {
            throw CDNProfileError("\(source): carrier = manifest needs manifest-origin (the http(s):// base URL the manifests are fetched from)")
        }
        var manifestMaxBytes = Self.defaultManifestMaxBytes
        if let text = single["manifest-max-bytes"]?.value {
            guard carrier == .manifest else {
                throw CDNProfileError("\(place("manifest-max-bytes")): manifest-max-bytes is for carrier = manifest only")
            }
            guard let bytes = Int(text), Self.manifestMaxBytesRange.contains(bytes) else {
                throw CDNProfileError(
                    "\(place("manifest-max-bytes")): manifest-max-bytes takes bytes, from \(Self.manifestMaxBytesRange.lowerBound) "
                        + "to \(Self.manifestMaxBytesRange.upperBound)"
                )
            }
            manifestMaxBytes = bytes
        }

        var sameSite = SameSite.lax
        if let text = single["same-site"]?.value {
            guard let value = SameSite(rawValue: text) else { throw CDNProfileError("\(place("same-site")): same-site takes lax or none") }
            sameSite = value
        }
        if sameSite == .none, let plain = resources.first(where: { $0.url.scheme != "https" }) {
            throw CDNProfileError("\(place("same-site")): same-site = none needs https, and \(Self.printable(plain.id)) is \(plain.url)")
        }
        let cookieDomain = single["cookie-domain"]?.value.lowercased()
        if let cookieDomain {
            let domain = cookieDomain.hasPrefix(".") ? String(cookieDomain.dropFirst()) : cookieDomain
            guard !domain.isEmpty, domain.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }),
                domain.contains(".")
            else {
                throw CDNProfileError("\(place("cookie-domain")): '\(Self.printable(cookieDomain))' is not a domain name with a dot")
            }
            if let foreign = resources.first(where: { $0.url.host != domain && !$0.url.host.hasSuffix("." + domain) }) {
                throw CDNProfileError(
                    "\(place("cookie-domain")): \(foreign.url.host) (resource \(Self.printable(foreign.id))) is not in the domain \(domain): "
                        + "a browser would never send the cookie there"
                )
            }
        }
        if carrier != .cookie, single["cookie-domain"] != nil || single["same-site"] != nil {
            throw CDNProfileError("\(source): cookie-domain and same-site are for the cookie carrier")
        }
        let tokenName = single["token-name"]?.value
        if let tokenName {
            guard kind != .cloudfront else {
                throw CDNProfileError("\(place("token-name")): CloudFront's names are its own; token-name is not for kind cloudfront")
            }
            let allowed = tokenName.utf8.allSatisfy {
                $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "_") || (kind != .nginxSecureLink && $0 == UInt8(ascii: "-"))
            }
            guard !tokenName.isEmpty, tokenName.utf8.count <= 64, allowed else {
                throw CDNProfileError(
                    "\(place("token-name")): '\(Self.printable(tokenName))' is not letters, digits, '_'"
                        + (kind == .nginxSecureLink ? " (nginx's $cookie_ names take no '-')" : " and '-'")
                )
            }
        }
        let issuer = single["issuer"]?.value
        if issuer != nil, kind != .cat { throw CDNProfileError("\(place("issuer")): issuer is for kind cat only") }
        let audience = single["audience"]?.value
        if audience != nil, kind != .cat { throw CDNProfileError("\(place("audience")): audience is for kind cat only") }
        if let audience, audience.isEmpty || !audience.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw CDNProfileError("\(place("audience")): audience is one word of visible ASCII (a URI or a name, as RFC 8392's aud)")
        }
        var lifetime: Int64? = nil
        if let text = single["lifetime"]?.value {
            guard let seconds = Int64(text), seconds >= 1, seconds <= Self.maximumLifetime else {
                throw CDNProfileError("\(place("lifetime")): lifetime takes seconds, from 1 to \(Self.maximumLifetime)")
            }
            lifetime = seconds
        }
        let ipHeader = single["ip-header"]?.value ?? "X-Real-IP"
        guard ipHeader.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") }), ipHeader.utf8.count <= 64 else {
            throw CDNProfileError("\(place("ip-header")): '\(Self.printable(ipHeader))' is not a header name")
        }
        let secureLinkMD5 = single["secure-link-md5"]?.value
        if kind == .nginxSecureLink, secureLinkMD5 == nil {
            throw CDNProfileError(
                "\(source): kind nginx-secure-link needs secure-link-md5 (the edge's secure_link_md5 expression, the secret written $secret)"
            )
        }
        if kind != .nginxSecureLink, secureLinkMD5 != nil {
            throw CDNProfileError("\(place("secure-link-md5")): secure-link-md5 is for kind nginx-secure-link only")
        }

        self.source = source
        self.name = name
        self.kind = kind
        self.keys = keys
        self.resources = resources
        self.scope = scope
        self.allowHostScopeInsecure = allowHostScope
        self.carrier = carrier
        self.cookieDomain = cookieDomain
        self.sameSite = sameSite
        self.tokenName = tokenName
        self.issuer = issuer
        self.audience = audience
        self.lifetime = lifetime
        self.bindIP = try flag("bind-ip")
        self.ipHeader = ipHeader
        self.secureLinkMD5 = secureLinkMD5
        self.manifestOrigin = manifestOrigin
        self.manifestMaxBytes = manifestMaxBytes
        self.renewal = try CATRenewalSetting.read(kind: kind, source: source) { single[$0].map { ($0.value, "\(source):\($0.line)") } }
    }

    /// The URL `resource` plays from, or nil when the profile does not name it.
    public func url(of resource: String) -> CDNURL? {
        resources.first { $0.id == resource }?.url
    }

    private static func checkKeyID(_ id: String, _ place: String) throws(CDNProfileError) {
        guard id.utf8.count <= 128, id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw CDNProfileError("\(place): a key id is printable ASCII without spaces, at most 128 bytes")
        }
    }

    private static func trimmed(_ text: Substring) -> String {
        var slice = text
        while let first = slice.first, first == " " || first == "\t" || first == "\r" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" || last == "\r" { slice = slice.dropLast() }
        return String(slice)
    }

    private static func trimmed(_ text: String) -> String { trimmed(text[...]) }

    /// A name read from a file, escaped as every text that reaches a terminal or a log is.
    static func printable(_ text: String) -> String { TerminalText(escaping: text).rendered }
}
