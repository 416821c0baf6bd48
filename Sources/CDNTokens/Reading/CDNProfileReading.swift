extension CDNProfile {
    /// Every key the profile holds (the first signs, every one verifies),
    /// its secure-link expression, and a CAT profile's `issuer`: what the
    /// edge this profile issues for checks a token with.
    public var verificationKeys: CDNVerificationKeys {
        let label = "the profile \(name)"
        switch keys {
        case .akamai(let keys):
            return CDNVerificationKeys(kind: kind, label: label, material: .akamai(keys))
        case .cloudfront(_, let verifiers):
            return CDNVerificationKeys(kind: kind, label: label, material: .cloudfront(named: verifiers, unnamed: nil))
        case .cat(let keys):
            return CDNVerificationKeys(kind: kind, label: label, material: .cat(keys, issuer: settings.issuer, audience: settings.audience))
        case .secureLink(let expression, let secrets):
            return CDNVerificationKeys(kind: kind, label: label, material: .secureLink(expression, secrets: secrets))
        }
    }

    /// Reads a paste as this profile's edge would: its kind only, under its
    /// `token-name` when it sets one.
    public func read(_ text: String) throws(CDNRefusal) -> CDNReading {
        try CDNReading(text: text, kind: kind, tokenName: settings.tokenName)
    }

    /// Verifies `reading` with every key of the profile against `facts`;
    /// throws the refusal of docs/DESIGN.md#reading-cdn-tokens-back.
    public func verify(reading: CDNReading, facts: CDNRequestFacts) throws(CDNRefusal) {
        try reading.verify(keys: verificationKeys, facts: facts)
    }
}
