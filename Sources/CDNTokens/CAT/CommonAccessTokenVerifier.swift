import EntitlementTokens

extension UnverifiedCommonAccessToken {
    /// Checks the token as an origin or an edge does (docs/DESIGN.md#the-cdn-exchange),
    /// in this order, and throws the first failure:
    ///
    /// 1. the key: a `kid` selects the keys with that id, and keys without an
    ///    id when none has it (no `kid`: every key); the protected `alg` must
    ///    be the key's algorithm and fit the structure (an `alg` only in the
    ///    unprotected header, or one the key does not make, is refused: no
    ///    algorithm confusion); the MAC (compared in constant time) or the
    ///    ES256 signature over the bytes as received — `INVALID_SIGNATURE`;
    /// 2. `catv` 1 when present — else `UNSUPPORTED_CLAIM`;
    /// 3. `exp` and `nbf` with `facts.leeway` — `TOKEN_EXPIRED`, `TOKEN_NOT_YET_VALID`;
    /// 4. `iss` equal to `expectedIssuer` when given, and `aud` naming
    ///    `expectedAudience` (a token with an `aud` and no expected audience is
    ///    `UNSUPPORTED_CLAIM`: RFC 8392 §3.1.3 says a recipient that is not named must refuse);
    /// 5. claims that restrict the request and are not judged here (`catgeo*`,
    ///    `catalpn`, `cath`, `cattpk`, `catdpop`, `catif`, `catpor`) and claim keys
    ///    this reader does not know (one may restrict) — `UNSUPPORTED_CLAIM` naming it;
    /// 6. `catu` against `facts.url` (skipped when no URL is given) and `catm`
    ///    against `facts.method` — `URL_NOT_COVERED`; `catnip` against
    ///    `facts.clientIP` — `IP_MISMATCH`.
    ///
    /// `catreplay` and `cti` are read, not enforced: the gate's replay store
    /// does that with ``VerifiedCommonAccessToken/replay``.
    public func verify(
        keys: [CATKey],
        facts: CDNRequestFacts,
        expectedIssuer: String? = nil,
        expectedAudience: String? = nil
    ) throws(CDNRefusal) -> VerifiedCommonAccessToken {
        try authenticated(by: keys).verify(facts: facts, expectedIssuer: expectedIssuer, expectedAudience: expectedAudience)
    }

    /// Step 1 of ``verify(keys:facts:expectedIssuer:expectedAudience:)`` alone:
    /// the key, the algorithm and the MAC or signature, no claim judged. What
    /// a caller may keep for a token presented again (its claims still judged
    /// against each request).
    public func authenticated(by keys: [CATKey]) throws(CDNRefusal) -> AuthenticatedCommonAccessToken {
        let key = try CATAuthentication.verifyingKey(for: message, among: keys)
        return AuthenticatedCommonAccessToken(uncheckedMessage: message, token: token, keyID: key.id)
    }
}

extension AuthenticatedCommonAccessToken {
    /// Steps 2 to 6 of ``UnverifiedCommonAccessToken/verify(keys:facts:expectedIssuer:expectedAudience:)``:
    /// the claims against `facts`, in the same order, the first failure thrown.
    public func verify(
        facts: CDNRequestFacts,
        expectedIssuer: String? = nil,
        expectedAudience: String? = nil
    ) throws(CDNRefusal) -> VerifiedCommonAccessToken {
        try CATClaimPolicy.checkAll(token, facts, CATClaimPolicy.Expectations(issuer: expectedIssuer, audience: expectedAudience))
        return VerifiedCommonAccessToken(claimsHeldBy: self)
    }
}

/// The MAC or signature of a COSE message, and the key that makes it.
enum CATAuthentication {
    static func verifyingKey(for message: COSEMessage, among keys: [CATKey]) throws(CDNRefusal) -> CATKey {
        guard let algorithmValue = message.protectedAlgorithm else {
            if let unprotected = message.unprotectedAlgorithm {
                throw CDNRefusal(
                    .invalidSignature,
                    "alg \(COSEAlgorithm.describe(unprotected)) is only in the unprotected header, which the \(message.structure.rawValue) does not cover (RFC 9052 §3.1)"
                )
            }
            throw CDNRefusal(.invalidSignature, "no alg in the protected header")
        }
        guard let algorithm = algorithmValue.int64.flatMap(COSEAlgorithm.init(rawValue:)) else {
            throw CDNRefusal(.invalidSignature, "alg \(COSEAlgorithm.describe(algorithmValue)) is not accepted (5 HMAC 256/256 or −7 ES256)")
        }
        guard algorithm.structure == message.structure else {
            throw CDNRefusal(.invalidSignature, "alg \(algorithm.name) in a \(message.structure.rawValue)")
        }
        if let critical = message.criticalHeaders {
            throw CDNRefusal(.invalidTokenFormat, "crit \(critical.diagnostic()): this reader processes no critical header (RFC 9052 §3.1)")
        }
        let candidates: [CATKey]
        let kidText: String?
        if let kid = message.keyID {
            let named = keys.filter { $0.id.map { Array($0.utf8) == kid } ?? false }
            candidates = named.isEmpty ? keys.filter { $0.id == nil } : named
            kidText = CBORValue.text(String(validating: kid, as: UTF8.self) ?? ByteRules.lowercaseHex(kid)).diagnostic()
            guard !candidates.isEmpty else { throw CDNRefusal(.invalidSignature, "no key with kid \(kidText!)") }
        } else {
            candidates = keys
            kidText = nil
            guard !candidates.isEmpty else { throw CDNRefusal(.invalidSignature, "no CAT key is configured") }
        }
        let fitting = candidates.filter { $0.algorithm == algorithm }
        guard !fitting.isEmpty else {
            throw CDNRefusal(
                .invalidSignature,
                "alg \(algorithm.name) does not fit \(candidates.map(\.label).joined(separator: ", "))"
            )
        }
        let tag = message.authenticationTag
        guard tag.count == algorithm.tagByteCount else {
            throw CDNRefusal(
                .invalidSignature,
                "a \(tag.count)-byte \(algorithm == .es256 ? "signature" : "MAC"); \(algorithm.name) makes \(algorithm.tagByteCount) bytes"
            )
        }
        let signed = message.toBeAuthenticated
        for key in fitting where isValid(tag, over: signed, key: key) { return key }
        let what = algorithm == .es256 ? "signature" : "MAC"
        throw CDNRefusal(.invalidSignature, "the \(what) does not verify with " + (kidText.map { "the key for kid \($0)" } ?? "any configured key"))
    }

    static func isValid(_ tag: [UInt8], over message: [UInt8], key: CATKey) -> Bool {
        switch key.material {
        case .hmac(let secret):
            guard let expected = ForeignDigest.sha256.hmac(key: secret, message: message) else { return false }
            return ConstantTime.equals(expected, tag)
        case .signing(let signingKey):
            return signingKey.publicKey.isValidSignature(tag, for: message)
        case .verifying(let publicKey):
            return publicKey.isValidSignature(tag, for: message)
        }
    }

    /// The MAC or signature `key` makes over `message`'s to-be-authenticated bytes.
    static func authenticate(_ message: COSEMessage, with key: CATKey) throws(CDNRefusal) -> [UInt8] {
        try authenticate(message.toBeAuthenticated, with: key)
    }

    /// The MAC or signature `key` makes over `signed`, a message's to-be-authenticated bytes.
    static func authenticate(_ signed: [UInt8], with key: CATKey) throws(CDNRefusal) -> [UInt8] {
        switch key.material {
        case .hmac(let secret):
            guard let mac = ForeignDigest.sha256.hmac(key: secret, message: signed) else { throw .format("HMAC-SHA-256 failed (OpenSSL)") }
            return mac
        case .signing(let signingKey):
            do { return try signingKey.rawECDSASignature(for: signed) } catch { throw .format("cannot sign the CAT: \(error.message)") }
        case .verifying:
            throw .format("\(key.label) is a public key; issuing a CAT needs the private key")
        }
    }
}

/// The claim checks, one small function each, run in order by the verifier.
enum CATClaimPolicy {
    struct Expectations {
        var issuer: String?
        var audience: String?
    }

    /// Every check, in the order the verifier documents; the first failure is thrown.
    static func checkAll(_ token: CommonAccessToken, _ facts: CDNRequestFacts, _ expected: Expectations) throws(CDNRefusal) {
        try version(token, facts, expected)
        try expiry(token, facts, expected)
        try notBefore(token, facts, expected)
        try issuer(token, facts, expected)
        try audience(token, facts, expected)
        try unjudgedClaims(token, facts, expected)
        try uri(token, facts, expected)
        try method(token, facts, expected)
        try network(token, facts, expected)
    }

    static func version(_ token: CommonAccessToken, _ facts: CDNRequestFacts, _ expected: Expectations) throws(CDNRefusal) {
        if let version = token.version, version != 1 {
            throw CDNRefusal(.unsupportedClaim, "catv \(version) (only CAT version 1 is read)")
        }
    }

    static func expiry(_ token: CommonAccessToken, _ facts: CDNRequestFacts, _ expected: Expectations) throws(CDNRefusal) {
        guard let expires = token.expires else { return }
        let (late, overflow) = facts.now.subtractingReportingOverflow(expires)
        if overflow ? expires < 0 : late > facts.leeway {
            throw CDNRefusal(.tokenExpired, "exp \(expires) is before now (\(facts.now)) by more than the leeway of \(facts.leeway) s")
        }
    }

    static func notBefore(_ token: CommonAccessToken, _ facts: CDNRequestFacts, _ expected: Expectations) throws(CDNRefusal) {
        guard let notBefore = token.notBefore else { return }
        let (early, overflow) = notBefore.subtractingReportingOverflow(facts.now)
        if overflow ? notBefore > 0 : early > facts.leeway {
            throw CDNRefusal(.tokenNotYetValid, "nbf \(notBefore) is after now (\(facts.now)) by more than the leeway of \(facts.leeway) s")
        }
    }

    static func issuer(_ token: CommonAccessToken, _ facts: CDNRequestFacts, _ expected: Expectations) throws(CDNRefusal) {
        guard let wanted = expected.issuer else { return }
        guard let issuer = token.issuer else {
            throw CDNRefusal(.invalidSignature, "no iss; the expected issuer is \(CBORValue.text(wanted).diagnostic())")
        }
        guard Array(issuer.utf8) == Array(wanted.utf8) else {
            throw CDNRefusal(
                .invalidSignature,
                "iss \(CBORValue.text(issuer).diagnostic()) is not the expected issuer \(CBORValue.text(wanted).diagnostic())"
            )
        }
    }

    static func audience(_ token: CommonAccessToken, _ facts: CDNRequestFacts, _ expected: Expectations) throws(CDNRefusal) {
        guard let audience = token.audience else { return }
        let written = CBORValue.array(audience.map(CBORValue.text)).diagnostic()
        guard let wanted = expected.audience else {
            throw CDNRefusal(.unsupportedClaim, "aud \(written) (no expected audience is configured)")
        }
        guard audience.contains(where: { Array($0.utf8) == Array(wanted.utf8) }) else {
            throw CDNRefusal(.invalidSignature, "aud \(written) does not name the expected audience \(CBORValue.text(wanted).diagnostic())")
        }
    }

    static func unjudgedClaims(_ token: CommonAccessToken, _ facts: CDNRequestFacts, _ expected: Expectations) throws(CDNRefusal) {
        for entry in token.claims {
            guard let label = entry.key.int64, let claim = CATClaim(rawValue: label) else {
                throw CDNRefusal(
                    .unsupportedClaim,
                    "\(CATClaim.describe(entry.key)) is not a claim this reader knows, and it may restrict the request"
                )
            }
            if claim.isUnjudgedRestriction {
                throw CDNRefusal(.unsupportedClaim, "\(claim.name) restricts the request in a way this reader does not check")
            }
        }
    }

    static func uri(_ token: CommonAccessToken, _ facts: CDNRequestFacts, _ expected: Expectations) throws(CDNRefusal) {
        guard let restriction = token.uriRestriction, let url = facts.url else { return }
        try restriction.judge(url)
    }

    static func method(_ token: CommonAccessToken, _ facts: CDNRequestFacts, _ expected: Expectations) throws(CDNRefusal) {
        guard let methods = token.methods else { return }
        // ASCII case folding only: a method is a token of ASCII letters (RFC 9110 §9.1).
        func folded(_ text: String) -> [UInt8] { text.utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 } }
        let asked = folded(facts.method)
        guard methods.contains(where: { folded($0) == asked }) else {
            let target = facts.url.map { " \($0)" } ?? ""
            throw CDNRefusal(
                .urlNotCovered,
                "catm \(CBORValue.array(methods.map(CBORValue.text)).diagnostic()) does not cover \(CBORValue.text(facts.method).diagnostic())\(target)"
            )
        }
    }

    static func network(_ token: CommonAccessToken, _ facts: CDNRequestFacts, _ expected: Expectations) throws(CDNRefusal) {
        guard let restriction = token.networkRestriction else { return }
        try restriction.judge(clientIP: facts.clientIP)
    }
}
