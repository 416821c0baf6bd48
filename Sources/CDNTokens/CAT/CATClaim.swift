/// The claim keys a Common Access Token is read with: the CWT claims of
/// RFC 8392 §3.1 and CTA-5007's CAT claims, each by its integer key.
public enum CATClaim: Int64, Sendable, Hashable, CaseIterable {
    case iss = 1
    case sub = 2
    case aud = 3
    case exp = 4
    case nbf = 5
    case iat = 6
    case cti = 7
    case catreplay = 308
    case catpor = 309
    case catv = 310
    case catnip = 311
    case catu = 312
    case catm = 313
    case catalpn = 314
    case cath = 315
    case catgeoiso3166 = 316
    case catgeocoord = 317
    case catgeoalt = 318
    case cattpk = 319
    case catifdata = 320
    case catdpop = 321
    case catif = 322
    case catr = 323

    /// The claim's name as the specifications write it (`catu`).
    public var name: String { String(describing: self) }

    /// Claims that restrict the request in a way this reader does not judge
    /// (geography, TLS, headers, DPoP, conditional logic, probability of
    /// rejection): a token holding one is refused as `UNSUPPORTED_CLAIM`,
    /// never accepted as if the restriction were not there.
    public var isUnjudgedRestriction: Bool {
        switch self {
        case .catgeoiso3166, .catgeocoord, .catgeoalt, .catalpn, .cath, .cattpk, .catdpop, .catif, .catpor: true
        default: false
        }
    }

    /// The claim's name for a map key, or the key itself (`claim 999`, `claim "x"`).
    static func describe(_ key: CBORValue) -> String {
        if let label = key.int64, let claim = CATClaim(rawValue: label) { return claim.name }
        return "claim \(key.diagnostic())"
    }

    /// Diagnostic-notation comments: claim names, and inside `catu` the
    /// component and match names (`312 /catu/: {3 /path/: {1 /prefix/: "/hls/"}}`),
    /// inside `catr` its labels (`323 /catr/: {0 /type/: 2, 1 /expadd/: 3600}`).
    static let diagnosticLabels: CBORDiagnosticLabels = {
        let matches = CBORDiagnosticLabels(names: Dictionary(uniqueKeysWithValues: CATMatchType.allCases.map { ($0.rawValue, $0.name) }))
        let components = CBORDiagnosticLabels(
            names: Dictionary(uniqueKeysWithValues: CATURIComponent.allCases.map { ($0.rawValue, $0.name) }),
            nested: Dictionary(uniqueKeysWithValues: CATURIComponent.allCases.map { ($0.rawValue, matches) })
        )
        return CBORDiagnosticLabels(
            names: Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0.name) }),
            nested: [CATClaim.catu.rawValue: components, CATClaim.catr.rawValue: CATRenewal.diagnosticLabels]
        )
    }()
}

/// `catreplay` (CTA-5007): whether the token may be presented more than once.
/// The reader exposes it with the token's `cti`; the gate's replay store enforces it.
public enum CATReplayPolicy: Int64, Sendable, Hashable, CaseIterable {
    case permitted = 0
    case prohibited = 1
    /// Reuse is allowed but counted and logged.
    case reuseDetection = 2
}
