import EntitlementTokens

/// An EdgeAuth token that passed every check of
/// ``EdgeAuthToken/verify(key:facts:algorithm:salt:)``: only the verifier
/// makes one, from the bytes the HMAC covers.
public struct VerifiedEdgeAuthToken: Sendable, Hashable {
    public let token: EdgeAuthToken
    public let algorithm: EdgeAuthAlgorithm
    /// URL form: the URL text the HMAC covered (the path as asked, or early-escaped).
    public let signedURL: String?
    /// ACL form, when a URL was given: the first ACL that covers it.
    public let coveringACL: EdgeAuthACL?
}

extension EdgeAuthToken {
    /// Checks the token as an Akamai edge would, in this order, and throws the
    /// first failure:
    ///
    /// 1. the `hmac` (compared in constant time) under `key`, `algorithm` and
    ///    `salt` — a URL-form token against `facts.url`'s path (and path with
    ///    query) as asked and early-escaped, percent-decoded or not
    ///    (`INVALID_SIGNATURE`);
    /// 2. `st` and `exp` against `facts.now`, each with `facts.leeway`
    ///    (`TOKEN_NOT_YET_VALID`, `TOKEN_EXPIRED`; the token is valid through
    ///    the second `exp` names, plus the leeway);
    /// 3. the ACLs against `facts.url`'s path, when a URL is given
    ///    (`URL_NOT_COVERED` naming the ACL and the URL);
    /// 4. `ip` against `facts.clientIP` (`IP_MISMATCH`; an unknown viewer IP
    ///    never matches).
    @discardableResult
    public func verify(
        key: EdgeAuthKey,
        facts: CDNRequestFacts,
        algorithm: EdgeAuthAlgorithm = .sha256,
        salt: String? = nil
    ) throws(CDNRefusal) -> VerifiedEdgeAuthToken {
        let signedURL = try checkSignature(key: key, url: facts.url, algorithm: algorithm, salt: salt)
        try checkTimes(facts)
        let covering = try checkScope(facts.url)
        try checkAddress(facts.clientIP)
        return VerifiedEdgeAuthToken(token: self, algorithm: algorithm, signedURL: signedURL, coveringACL: covering)
    }

    /// Returns the URL text a URL-form token's HMAC covered, nil for ACL form.
    private func checkSignature(key: EdgeAuthKey, url: CDNURL?, algorithm: EdgeAuthAlgorithm, salt: String?) throws(CDNRefusal) -> String? {
        guard hmac.count * 2 == algorithm.hmacHexLength else {
            throw .format("the hmac has \(hmac.count * 2) hex digits; HMAC-\(algorithm.rawValue) has \(algorithm.hmacHexLength)")
        }
        guard isURLForm else {
            guard ConstantTime.equals(try key.hmac(signedBytes(urlBytes: nil, salt: salt), algorithm), hmac) else {
                throw CDNRefusal(
                    .invalidSignature,
                    "the EdgeAuth hmac does not match (HMAC-\(algorithm.rawValue) under this key\(salt == nil ? "" : " and salt"))"
                )
            }
            return nil
        }
        guard let url else {
            throw CDNRefusal(.urlNotCovered, "a URL-form EdgeAuth token signs the URL it was made for; no URL was given to check it against")
        }
        for candidate in Self.signedURLCandidates(url) {
            if ConstantTime.equals(try key.hmac(signedBytes(urlBytes: candidate, salt: salt), algorithm), hmac) {
                return String(decoding: candidate, as: UTF8.self)
            }
        }
        throw CDNRefusal(
            .invalidSignature,
            "the EdgeAuth hmac matches neither \(url.pathAndQuery) as asked nor early-escaped (another key, or a token for another URL)"
        )
    }

    /// What a maker may have signed for the URL an edge was asked for: the
    /// path (then the path with its query, when there is one) as asked,
    /// early-escaped, percent-decoded, and decoded then escaped. At most eight
    /// HMACs, each over a bounded URL.
    static func signedURLCandidates(_ url: CDNURL) -> [[UInt8]] {
        var candidates: [[UInt8]] = []
        for asked in [url.path] + (url.query == nil ? [] : [url.pathAndQuery]) {
            let bytes = Array(asked.utf8)
            let decoded = URLEscaping.percentDecoded(bytes)
            for candidate in [bytes, Array(URLEscaping.quotePlusLowercase(bytes).utf8), decoded, Array(URLEscaping.quotePlusLowercase(decoded).utf8)]
            where !candidates.contains(candidate) {
                candidates.append(candidate)
            }
        }
        return candidates
    }

    private func checkTimes(_ facts: CDNRequestFacts) throws(CDNRefusal) {
        let leeway = max(facts.leeway, 0)
        // A window of no second is valid at no time, as Akamai's edge judges it: before it, not yet
        // valid; from it on, expired. The leeway widens a window, it does not make one.
        if let startTime, startTime == expires {
            if facts.now.addingSaturating(leeway) < startTime {
                throw CDNRefusal(
                    .tokenNotYetValid,
                    "the EdgeAuth token starts at \(startTime) (st) and expires then (exp): it is valid for no second"
                )
            }
            throw CDNRefusal(.tokenExpired, "the EdgeAuth token expires at \(expires) (exp), the second it starts (st): it is valid for no second")
        }
        if let startTime, facts.now.addingSaturating(leeway) < startTime {
            throw CDNRefusal(.tokenNotYetValid, "the EdgeAuth token starts at \(startTime) (st); now is \(facts.now), leeway \(leeway) s")
        }
        if facts.now > expires.addingSaturating(leeway) {
            throw CDNRefusal(.tokenExpired, "the EdgeAuth token expired at \(expires) (exp); now is \(facts.now), leeway \(leeway) s")
        }
    }

    private func checkScope(_ url: CDNURL?) throws(CDNRefusal) -> EdgeAuthACL? {
        guard let acl, let url else { return nil }
        if let covering = acl.first(where: { $0.covers(path: url.scopePath) }) { return covering }
        let written = acl.map(\.text).joined(separator: "!")
        throw CDNRefusal(.urlNotCovered, "the EdgeAuth acl '\(written)' does not cover \(url)")
    }

    private func checkAddress(_ clientIP: String?) throws(CDNRefusal) {
        guard let ip else { return }
        guard let clientIP else {
            throw CDNRefusal(.ipMismatch, "the EdgeAuth token is bound to the IP \(ip); the viewer's IP is unknown")
        }
        let viewer = clientIP.lowercased()
        let decoded = String(decoding: URLEscaping.percentDecoded(ip.utf8), as: UTF8.self)
        guard viewer == ip.lowercased() || viewer == decoded.lowercased() else {
            throw CDNRefusal(.ipMismatch, "the EdgeAuth token is bound to the IP \(ip); the viewer's IP is \(clientIP)")
        }
    }
}

extension Int64 {
    /// `self + other`, held at `Int64.max` or `.min` instead of overflowing.
    fileprivate func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
