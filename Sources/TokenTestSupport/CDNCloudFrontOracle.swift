import CDNTokens
import EntitlementTokens

/// FuzzCloudFront: CloudFront signed URLs, signed cookies and policies
/// (docs/DESIGN.md#the-cdn-exchange).
///
/// The input is read every way a CloudFront reader meets text: as a signed URL,
/// as a `Cookie:` line's pairs, as a policy's JSON, as CloudFront Base64, as an
/// IP range, and as a `Resource` pattern and a URL (split at the first line feed).
///
/// - **Decode, encode, decode is stable**: a token's ``CloudFrontToken/pairs``
///   read back as the same token; a policy's ``CloudFrontPolicy/json`` reads back
///   as the same policy and re-encodes to the same bytes; CloudFront Base64
///   re-encodes to the text it was read from; an IP range re-reads from its text.
/// - **A verified token's policy is the signed bytes' policy**: a token that
///   verifies carries, as its proof, exactly the bytes the key verifies and the
///   policy those bytes read as (for a canned policy, the one rebuilt from its
///   URL and `Expires`). The input's own policy, signed here, must verify inside
///   its own conditions and be refused with the right status outside them.
/// - **An issued token verifies**: a URL the input reads as is issued for (both
///   scopes, with and without a bound IP); the signed URL must read back, give the
///   URL it was issued for, and verify, on both carriers. A refusal to issue must
///   be `INVALID_TOKEN_FORMAT` for a URL holding what a policy would escape.
/// - The wildcard matcher agrees with a dynamic-programming matcher.
public final class CDNCloudFrontOracle {
    public static let target = "FuzzCloudFront"
    static let keyPairID = "FUZZKEY"
    static let now: Int64 = 1_800_000_000
    let key: SigningKey
    let issuer: CloudFrontIssuer
    let keys: [String: PublicKey]

    /// `keyPath`: an RSA private key of at least 2048 bits (e.g. Samples/keys/test-rsa2048.pem).
    public init(keyPath: String) {
        guard let key = try? SigningKey(path: keyPath), let issuer = try? CloudFrontIssuer(key: key, keyPairID: Self.keyPairID) else {
            setupFailure("cannot load an RSA-2048 signing key from \(keyPath)")
        }
        self.key = key
        self.issuer = issuer
        self.keys = [Self.keyPairID: key.publicKey]
    }

    public func check(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        if let url = try? CDNURL(parsing: text) {
            checkSignedURL(url)
            checkIssue(url, selector: input.last ?? 0)
        }
        checkCookies(text)
        if let policy = try? CloudFrontPolicy(json: input) {
            checkPolicy(policy, bytes: input)
        }
        if let bytes = try? CloudFrontBase64.decode(text, field: "input"), CloudFrontBase64.encode(bytes) != text {
            oracleFailure(Self.target, "CloudFront Base64 read \(escaped(text)) but re-encodes differently")
        }
        if let range = try? CloudFrontIPRange(parsing: text) {
            guard let again = try? CloudFrontIPRange(parsing: range.text), again == range else {
                oracleFailure(Self.target, "an IP range does not re-read from its text: \(escaped(text))")
            }
        }
        if let single = try? CloudFrontIPRange(singleAddress: text), !single.contains(text) {
            oracleFailure(Self.target, "the range written for \(escaped(text)) (\(single.text)) does not contain it")
        }
        checkPattern(input)
    }

    private func checkSignedURL(_ url: CDNURL) {
        guard let signed = try? CloudFrontSignedURL(url) else { return }
        checkToken(signed.token)
        if (try? CloudFrontSignedURL.removingSigningParameters(from: signed.unsignedURL)) != signed.unsignedURL {
            oracleFailure(Self.target, "removing the signing parameters twice changes the URL: \(escaped(url.description))")
        }
        checkVerification(signed.token, facts: CDNRequestFacts(url: url, now: Self.now))
    }

    private func checkCookies(_ text: String) {
        let pairs = text.split(separator: ";").map { piece -> CDNField in
            let trimmed = piece.drop { $0 == " " }
            guard let equals = trimmed.firstIndex(of: "=") else { return CDNField(String(trimmed), "") }
            return CDNField(String(trimmed[..<equals]), String(trimmed[trimmed.index(after: equals)...]))
        }
        guard let token = try? CloudFrontToken(cookiePairs: pairs) else { return }
        checkToken(token)
        checkVerification(token, facts: CDNRequestFacts(url: try? CDNURL(parsing: "https://h.example/a/b.ts"), now: Self.now))
    }

    /// Decode → encode → decode on both carriers.
    private func checkToken(_ token: CloudFrontToken) {
        for carrier in CloudFrontCarrier.allCases {
            let moved = token.carried(by: carrier)
            let again: CloudFrontToken?
            switch carrier {
            case .query: again = try? CloudFrontToken(queryPairs: moved.pairs)
            case .cookie: again = try? CloudFrontToken(cookiePairs: moved.pairs)
            }
            guard again == moved else { oracleFailure(Self.target, "a token's pairs do not read back as the token (\(carrier))") }
        }
        if case .custom(let policy, let bytes) = token.policy {
            guard (try? CloudFrontPolicy(json: bytes)) == policy else {
                oracleFailure(Self.target, "a token's policy differs from its bytes' reading")
            }
            checkPolicy(policy, bytes: bytes)
        }
    }

    /// A verdict of VALID carries the signed bytes and their policy, and the key verifies them.
    private func checkVerification(_ token: CloudFrontToken, facts: CDNRequestFacts) {
        guard let verified = try? token.verify(keys: keys, facts: facts) else { return }
        switch token.policy {
        case .custom(let policy, let bytes):
            if verified.signedPolicy != bytes || verified.policy != policy {
                oracleFailure(Self.target, "a verified custom token's proof is not its own policy bytes")
            }
        case .canned(let expires):
            let rebuilt = facts.url.map { CloudFrontPolicy(resource: $0.description, dateLessThan: expires) }
            if rebuilt == nil || verified.policy != rebuilt || verified.signedPolicy != rebuilt?.json {
                oracleFailure(Self.target, "a verified canned token's proof is not the policy rebuilt from its URL")
            }
        }
        if (try? CloudFrontPolicy(json: verified.signedPolicy)) != verified.policy {
            oracleFailure(Self.target, "a verified token's signed bytes do not read as its policy")
        }
        let digest: ForeignDigest = verified.hashAlgorithm == .sha1 ? .sha1 : .sha256
        if !key.publicKey.isValidSignature(token.signature, for: verified.signedPolicy, digest: digest) {
            oracleFailure(Self.target, "VALID_TOKEN for bytes the key does not verify")
        }
    }

    /// The policy re-encodes stably; signed here, it verifies inside its
    /// conditions and is refused with the right status outside them.
    private func checkPolicy(_ policy: CloudFrontPolicy, bytes: [UInt8]) {
        let json = policy.json
        guard let again = try? CloudFrontPolicy(json: json), again == policy, again.json == json else {
            oracleFailure(Self.target, "a policy does not survive json → read: \(escaped(json))")
        }
        guard let signature = try? key.pkcs1Signature(for: bytes, digest: .sha1) else { return }
        let token = CloudFrontToken(carrier: .cookie, policy: .custom(policy, bytes: bytes), signature: signature, keyPairID: Self.keyPairID)
        let inside = max(policy.dateGreaterThan ?? 0, policy.dateLessThan - 1)
        let clientIP = policy.ipAddress.map { CloudFrontIPRange.canonicalText($0.network) }
        let status: (CDNRequestFacts) -> CDNStatus? = { facts in
            do {
                _ = try token.verify(keys: self.keys, facts: facts)
                return nil
            } catch {
                return (error as? CDNRefusal)?.status
            }
        }
        if policy.dateLessThan > 0, inside >= (policy.dateGreaterThan ?? 0), inside < policy.dateLessThan,
            clientIP.map({ policy.ipAddress!.contains($0) }) ?? true
        {
            let verdict = status(CDNRequestFacts(url: nil, now: inside, clientIP: clientIP))
            if verdict != nil { oracleFailure(Self.target, "a policy signed here is refused inside its conditions: \(verdict!)") }
        }
        if status(CDNRequestFacts(url: nil, now: policy.dateLessThan, clientIP: clientIP)) != .tokenExpired {
            oracleFailure(Self.target, "a policy signed here is not TOKEN_EXPIRED at its DateLessThan")
        }
    }

    /// Issue for `url` (scope and binding chosen by `selector`); the result must verify.
    private func checkIssue(_ url: CDNURL, selector: UInt8) {
        let scope: CDNScope = selector & 1 == 0 ? .folder : .url
        let clientIP: String? =
            switch selector >> 1 & 3 {
            case 1: "203.0.113.\(selector)"
            case 2: "2001:db8::\(String(selector, radix: 16))"
            default: nil
            }
        let parameters = CDNIssueParameters(url: url, scope: scope, now: Self.now, lifetime: 300, clientIP: clientIP)
        let issued: IssuedCloudFrontToken
        do {
            issued = try issuer.issue(parameters)
        } catch {
            let text = url.description
            let escapes = !PythonJSONString.needsNoEscaping(text) || text.contains("*")
            let clashes = CloudFrontSignedURL.queryPairs(of: url).contains { CloudFrontToken.parameters.contains($0.name) }
            if error.status != .invalidTokenFormat || !(escapes || clashes) {
                oracleFailure(Self.target, "issuing for \(escaped(text)) was refused: \(error)")
            }
            return
        }
        guard let signedURL = try? CDNURL(parsing: issued.signedURL), let signed = try? CloudFrontSignedURL(signedURL) else {
            oracleFailure(Self.target, "an issued URL does not read back: \(escaped(issued.signedURL))")
        }
        if signed.token != issued.token || signed.unsignedURL != url {
            oracleFailure(Self.target, "an issued URL reads back as another token or URL: \(escaped(issued.signedURL))")
        }
        let facts = CDNRequestFacts(url: signedURL, now: Self.now, clientIP: clientIP)
        guard let verified = try? signed.token.verify(keys: keys, facts: facts), verified.signedPolicy == issued.signedPolicy else {
            oracleFailure(Self.target, "an issued URL does not verify: \(escaped(issued.signedURL))")
        }
        guard let cookies = try? CloudFrontToken(cookiePairs: issued.cookies),
            (try? cookies.verify(keys: keys, facts: CDNRequestFacts(url: url, now: Self.now, clientIP: clientIP))) != nil
        else {
            oracleFailure(Self.target, "issued cookies do not verify for \(escaped(url.description))")
        }
        checkToken(issued.token)
    }

    /// Pattern (before the first line feed) against URL (after it), for short inputs.
    private func checkPattern(_ input: [UInt8]) {
        guard input.count <= 96, let newline = input.firstIndex(of: 0x0A) else { return }
        let pattern = Array(input[..<newline])
        let text = Array(input[(newline + 1)...])
        guard let patternText = String(validating: pattern, as: UTF8.self), let urlText = String(validating: text, as: UTF8.self) else { return }
        let expected = Self.referenceMatch(pattern, text)
        if CloudFrontResourcePattern(patternText).matches(urlText) != expected {
            oracleFailure(Self.target, "the wildcard matcher says \(!expected) for \(escaped(patternText)) against \(escaped(urlText))")
        }
    }

    static func referenceMatch(_ p: [UInt8], _ t: [UInt8]) -> Bool {
        var previous = [Bool](repeating: false, count: t.count + 1)
        previous[0] = true
        for byte in p {
            var row = [Bool](repeating: false, count: t.count + 1)
            for j in 0...t.count {
                switch byte {
                case UInt8(ascii: "*"): row[j] = previous[j] || (j > 0 && row[j - 1])
                case UInt8(ascii: "?"): row[j] = j > 0 && previous[j - 1]
                default: row[j] = j > 0 && previous[j - 1] && byte == t[j - 1]
                }
            }
            previous = row
        }
        return previous[t.count]
    }
}
