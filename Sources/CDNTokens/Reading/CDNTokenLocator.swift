/// Finds the one CDN token a paste holds: which kind, in which carrier,
/// under which names. Every kind's names are looked for, and a paste that
/// holds two tokens (two kinds, one name twice, two of a kind's names) is
/// refused naming them: a reader that picked one could answer about a token
/// the edge never read (docs/DESIGN.md#reading-cdn-tokens-back).
package enum CDNTokenLocator {
    /// What was found: the kind, where, and the parts to read.
    struct Found {
        var kind: CDNTokenKind
        var carrier: CDNCarrier
        /// The pairs that make the token (one, or CloudFront's and secure_link's several).
        var pairs: [CDNPaste.Pair]
        /// The text of a bare token (without a `name=` it was pasted with).
        var bare: String?
        /// The name the token travels under: `__token__`, `cat`, a secure_link
        /// cookie prefix (`tg`); nil for CloudFront and for a bare token.
        var tokenName: String?
    }

    /// True when a URL's query names show a CDN token, by the kinds' own
    /// names when no profile names its own: an EdgeAuth or CAT name, or both
    /// of CloudFront's `Signature` and `Key-Pair-Id`, or both of secure_link's
    /// `md5` and `expires` (one `expires` alone is any URL's business).
    package static func showsCDNToken(queryNames names: Set<String>) -> Bool {
        !names.isDisjoint(with: EdgeAuthToken.carrierNames + ["cat"])
            || names.isSuperset(of: ["Signature", "Key-Pair-Id"])
            || names.isSuperset(of: [SecureLinkToken.md5Name, SecureLinkToken.expiresName])
    }

    /// The token in `paste`, of `kind` when one is given (then other kinds'
    /// names are not looked at); `tokenName` is a profile's `token-name`.
    static func locate(_ paste: CDNPaste, kind wanted: CDNTokenKind?, tokenName: String?) throws(CDNRefusal) -> Found {
        let kinds = wanted.map { [$0] } ?? CDNTokenKind.allCases
        var candidates: [(kind: CDNTokenKind, pairs: [CDNPaste.Pair])] = []
        for kind in kinds {
            let pairs = paste.pairs.filter { belongs($0, to: kind, tokenName: tokenName) }
            if !pairs.isEmpty { candidates.append((kind, pairs)) }
        }
        var bare: (kind: CDNTokenKind, name: String?, value: String)? = nil
        if let text = paste.bare {
            switch (bareToken(text, tokenName: tokenName), wanted) {
            case (let found?, nil):
                bare = found
            case (let found?, let wanted?) where found.kind == wanted:
                bare = found
            case (let found?, let wanted?):
                throw .format("the bare token is \(found.kind.rawValue) by its form, not \(wanted.rawValue)")
            case (nil, let wanted?) where wanted == .akamai || wanted == .cat:
                // Asked for this kind: read it as one, and let that reader say what is wrong.
                bare = (wanted, nil, text)
            case (nil, _):
                throw .format(
                    "the line '\(EdgeAuthToken.excerpt(text.utf8))' is not a CDN token: a bare token is an EdgeAuth token "
                        + "(st=…~exp=…~acl=…~hmac=…) or a CAT (base64url, Base64 or hex of a COSE message)"
                )
            }
        }
        var described = candidates.map { "\($0.kind.rawValue) (\(describe($0.pairs)))" }
        if let bare { described.append("\(bare.kind.rawValue) (a bare token)") }
        guard described.count <= 1 else {
            throw .format("two tokens of different kinds in one paste: \(described.joined(separator: " and ")); paste one, or say which kind")
        }
        if let bare {
            return Found(kind: bare.kind, carrier: .bare, pairs: [], bare: bare.value, tokenName: bare.name)
        }
        guard let (kind, pairs) = candidates.first else {
            let what = wanted.map { "no \($0.rawValue) token" } ?? "no CDN token"
            throw .format("\(what) in the paste: looked for \(lookedFor(wanted, tokenName: tokenName))")
        }
        let carriers = pairs.map(\.carrier).reduce(into: [CDNCarrier]()) { if !$0.contains($1) { $0.append($1) } }
        guard carriers.count == 1 else {
            throw .format(
                "the \(kind.rawValue) token is in \(carriers.map(\.phrase).joined(separator: " and ")) at once (\(describe(pairs))); "
                    + "an edge reads one of them, so paste one"
            )
        }
        let carrier = carriers[0]
        switch kind {
        case .akamai, .cat:
            try single(pairs, kind: kind)
            return Found(kind: kind, carrier: carrier, pairs: pairs, bare: nil, tokenName: pairs[0].name)
        case .cloudfront:
            return Found(kind: kind, carrier: carrier, pairs: pairs, bare: nil, tokenName: nil)
        case .nginxSecureLink:
            guard carrier != .query else { return Found(kind: kind, carrier: carrier, pairs: pairs, bare: nil, tokenName: nil) }
            let prefixes = pairs.compactMap(secureLinkPrefix).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            guard prefixes.count == 1 else {
                throw .format(
                    "two secure_link tokens in one paste: the cookies \(prefixes.map { "\($0)_md5" }.joined(separator: " and ")); paste one"
                )
            }
            return Found(kind: kind, carrier: carrier, pairs: pairs, bare: nil, tokenName: prefixes[0])
        }
    }

    /// True when `pair`, a cookie or header, is one of some kind's own names: a
    /// reader of a whole capture hands a paste only the pairs that are CDN
    /// tokens (a site's other cookies are none of the edge's business).
    package static func carriesToken(name: String, carrier: CDNCarrier) -> Bool {
        let pair = CDNPaste.Pair(name: name, value: "", carrier: carrier)
        return carrier != .query && CDNTokenKind.allCases.contains { belongs(pair, to: $0, tokenName: nil) }
    }

    /// True when `pair` is one of `kind`'s names on its carrier.
    static func belongs(_ pair: CDNPaste.Pair, to kind: CDNTokenKind, tokenName: String?) -> Bool {
        switch (kind, pair.carrier) {
        case (.akamai, .header), (.cloudfront, .header), (.nginxSecureLink, .header): return false
        case (.cat, .header): return true
        case (_, .bare): return false
        case (.akamai, _): return (tokenName.map { [$0] } ?? EdgeAuthToken.carrierNames).contains(pair.name)
        case (.cat, _): return pair.name == (tokenName ?? "cat")
        case (.cloudfront, .query): return CloudFrontToken.parameters.contains(pair.name)
        case (.cloudfront, _): return pair.name.hasPrefix("CloudFront-") && CloudFrontToken.parameters.contains(String(pair.name.dropFirst(11)))
        case (.nginxSecureLink, .query): return pair.name == SecureLinkToken.md5Name || pair.name == SecureLinkToken.expiresName
        case (.nginxSecureLink, _):
            guard let prefix = secureLinkPrefix(pair) else { return false }
            return tokenName.map { $0 == prefix } ?? true
        }
    }

    /// `tg` for the cookie `tg_md5` or `tg_expires`; nil for another name.
    static func secureLinkPrefix(_ pair: CDNPaste.Pair) -> String? {
        for suffix in ["_md5", "_expires"] where pair.name.hasSuffix(suffix) && pair.name.utf8.count > suffix.utf8.count {
            return String(pair.name.dropLast(suffix.count))
        }
        return nil
    }

    /// One pair for an EdgeAuth token or a CAT: the same name twice, or two
    /// of the kind's names, is two tokens.
    private static func single(_ pairs: [CDNPaste.Pair], kind: CDNTokenKind) throws(CDNRefusal) {
        guard pairs.count > 1 else { return }
        if pairs.allSatisfy({ $0.name == pairs[0].name }) {
            throw .format(
                "'\(pairs[0].name)' is given \(pairs.count) times in \(pairs[0].carrier.phrase); an edge and a reader could each take a different one"
            )
        }
        throw .format("two \(kind.rawValue) tokens in one paste: \(describe(pairs)); paste one")
    }

    /// A bare token's kind, read from its form: an EdgeAuth token starts with
    /// `ip=`, `st=` or `exp=` and has `~`; a CAT's bytes start a COSE message
    /// (an array of four, or tag 17, 18 or 61). `__token__=…` or `cat=…`, as
    /// copied out of a query, is the token under that name.
    static func bareToken(_ text: String, tokenName: String? = nil) -> (kind: CDNTokenKind, name: String?, value: String)? {
        let names = (tokenName.map { [$0] } ?? []) + EdgeAuthToken.carrierNames + ["cat"]
        for name in names where text.hasPrefix(name + "=") {
            let value = String(text.dropFirst(name.count + 1))
            if let kind = bareKind(value) { return (kind, name, value) }
        }
        return bareKind(text).map { ($0, nil, text) }
    }

    /// The kind a bare token's form shows, or nil.
    static func bareKind(_ text: String) -> CDNTokenKind? {
        if ["ip=", "st=", "exp="].contains(where: { text.hasPrefix($0) }), text.contains("~") { return .akamai }
        guard let (bytes, _) = try? CATTextEncoding.decode(text), let first = bytes.first else { return nil }
        return [0x84, 0xD1, 0xD2, 0xD8].contains(first) ? .cat : nil
    }

    /// `__token__ in the URL's query`, `CloudFront-Policy, CloudFront-Signature in a Cookie line`.
    static func describe(_ pairs: [CDNPaste.Pair]) -> String {
        var names: [String] = []
        for pair in pairs where !names.contains(pair.name) { names.append(pair.name) }
        return "\(names.map { EdgeAuthToken.excerpt($0.utf8) }.joined(separator: ", ")) in \(pairs[0].carrier.phrase)"
    }

    private static func lookedFor(_ kind: CDNTokenKind?, tokenName: String?) -> String {
        let kinds = kind.map { [$0] } ?? CDNTokenKind.allCases
        return kinds.map { kind in
            switch kind {
            case .akamai: "\((tokenName.map { [$0] } ?? EdgeAuthToken.carrierNames).joined(separator: ", ")) (akamai)"
            case .cat: "\(tokenName ?? "cat") or \(CDNProfile.catHeader) (cat)"
            case .cloudfront: "Signature, Key-Pair-Id and their CloudFront- cookies (cloudfront)"
            case .nginxSecureLink: "md5 and expires, or \(tokenName ?? "<name>")_md5 and _expires cookies (nginx-secure-link)"
            }
        }.joined(separator: "; ")
    }
}
