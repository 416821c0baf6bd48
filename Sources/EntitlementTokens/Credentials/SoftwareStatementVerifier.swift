/// A software statement that a trusted key verified and whose dates hold:
/// the proof a valid ``SoftwareStatementVerdict`` carries (docs/DESIGN.md#the-librarys-habits).
/// Only ``SoftwareStatementVerifier`` makes one, from the signed bytes.
public struct VerifiedSoftwareStatement: Sendable, Hashable {
    /// The statement; its claims are the ones decoded from the signed bytes.
    public let statement: SoftwareStatement
    /// The key that verified it (nil only when checking was switched off, insecurely).
    public let keyDescription: String?

    init(statement: SoftwareStatement, keyDescription: String?) {
        self.statement = statement
        self.keyDescription = keyDescription
    }
}

/// The answer for one software statement, with the statuses of docs/DESIGN.md#statuses where
/// they mean the same: `VALID_TOKEN`, `INVALID_TOKEN_FORMAT`,
/// `INVALID_SIGNATURE`, `TOKEN_EXPIRED`, `TOKEN_NOT_YET_VALID`.
public struct SoftwareStatementVerdict: Sendable {
    public let status: VerificationStatus
    /// For people; may quote input (escape it before a terminal or a log).
    public let reason: String
    /// The statement, when it decoded.
    public let statement: SoftwareStatement?
    /// Why decoding failed, for `INVALID_TOKEN_FORMAT`.
    public let formatError: TokenError?
    /// The proof, exactly when ``status`` is `VALID_TOKEN`.
    public let verified: VerifiedSoftwareStatement?
    /// The key that verified the signature, when one did.
    public let key: JWSVerificationKey?
    /// Checks that ran, in order, up to the one that failed.
    public let checks: [VerificationCheck]
    /// Checks that did not run, and why (a statement without `exp`: no expiry check).
    public let skipped: [SkippedCheck]
}

/// Verifies software statements (docs/DESIGN.md#software-statements) against trusted keys only.
///
/// The order is the tokens' (docs/DESIGN.md#statuses): format, signature, expiry, issue time; the
/// first failure decides.
///
/// - The header's `alg` must be on the allow-list (``JWSAlgorithm``): `none`
///   and HMAC are refused by name, anything else as unknown.
/// - Keys come from the ring and JWKS files, never the statement: `jwk`, `jku`,
///   `x5u` and `x5c` are ignored as key sources (and named in the reason when
///   no trusted key verifies). A `kid` selects the JWKS keys with that `kid`;
///   if none has it, the keys without a `kid` (the ring's) are tried, else
///   "no key with kid …". Without a `kid`, the keys without a `kid` are tried,
///   or every key when all have one. `x5t`/`x5t#S256` narrow the choice to
///   the JWKS keys with the same thumbprint, when some have it.
/// - The algorithm must fit the key (`JWSVerificationKey.misfit(for:)`); a
///   statement whose every candidate key misfits is `INVALID_SIGNATURE` naming both.
/// - `exp` before now − leeway is `TOKEN_EXPIRED`; no `exp` skips the check
///   (said in ``SoftwareStatementVerdict/skipped``); `iat` or `nbf` after now +
///   leeway is `TOKEN_NOT_YET_VALID`.
public struct SoftwareStatementVerifier: Sendable {
    /// nil: the signature is not checked (``insecureSkippingSignature(leewayMilliseconds:clock:)``).
    public let keys: [JWSVerificationKey]?
    public let leewayMilliseconds: Int64
    public let clock: @Sendable () -> TokenTimestamp
    public let decoderConfiguration: DecoderConfiguration

    /// Header members that name a key the signer chose; never used as a key.
    static let keyCarryingHeaderMembers = ["jwk", "jku", "x5u", "x5c"]

    public init(
        keys: [JWSVerificationKey],
        leewayMilliseconds: Int64 = 30_000,
        clock: @escaping @Sendable () -> TokenTimestamp = { .now() },
        decoderConfiguration: DecoderConfiguration = .default
    ) {
        self.keys = keys
        self.leewayMilliseconds = leewayMilliseconds
        self.clock = clock
        self.decoderConfiguration = decoderConfiguration
    }

    /// The ring's keys (each re-read for JWS) followed by every JWKS's keys.
    public init(
        ring: KeyRing?,
        keySets: [JSONWebKeySet] = [],
        leewayMilliseconds: Int64 = 30_000,
        clock: @escaping @Sendable () -> TokenTimestamp = { .now() },
        decoderConfiguration: DecoderConfiguration = .default
    ) throws(KeyError) {
        var keys: [JWSVerificationKey] = []
        for key in ring?.keys ?? [] { keys.append(try JWSVerificationKey(key)) }
        for set in keySets { keys += set.keys }
        self.init(keys: keys, leewayMilliseconds: leewayMilliseconds, clock: clock, decoderConfiguration: decoderConfiguration)
    }

    private init(unchecked leewayMilliseconds: Int64, clock: @escaping @Sendable () -> TokenTimestamp) {
        keys = nil
        self.leewayMilliseconds = leewayMilliseconds
        self.clock = clock
        decoderConfiguration = .default
    }

    /// Checks everything but the signature: never for deciding anything.
    public static func insecureSkippingSignature(
        leewayMilliseconds: Int64 = 30_000,
        clock: @escaping @Sendable () -> TokenTimestamp = { .now() }
    ) -> SoftwareStatementVerifier {
        SoftwareStatementVerifier(unchecked: leewayMilliseconds, clock: clock)
    }

    /// Decodes the JWS compact text and verifies it.
    public func verify(compact: [UInt8]) -> SoftwareStatementVerdict {
        do {
            let statement = try SoftwareStatement(compact: compact, limits: JSONDocumentLimits(configuration: decoderConfiguration))
            return verify(statement)
        } catch {
            return SoftwareStatementVerdict(
                status: .invalidTokenFormat,
                reason: error.message,
                statement: nil,
                formatError: error,
                verified: nil,
                key: nil,
                checks: [.format],
                skipped: []
            )
        }
    }

    public func verify(_ statement: SoftwareStatement) -> SoftwareStatementVerdict {
        var checks: [VerificationCheck] = [.format, .signature]
        var skipped: [SkippedCheck] = []
        func verdict(
            _ status: VerificationStatus,
            _ reason: String,
            key: JWSVerificationKey? = nil,
            verified: VerifiedSoftwareStatement? = nil
        ) -> SoftwareStatementVerdict {
            SoftwareStatementVerdict(
                status: status,
                reason: reason,
                statement: statement,
                formatError: nil,
                verified: verified,
                key: key,
                checks: checks,
                skipped: skipped
            )
        }

        var key: JWSVerificationKey?
        if let keys {
            switch checkSignature(statement, keys: keys) {
            case .success(let found): key = found
            case .failure(let failure): return verdict(.invalidSignature, failure.reason)
            }
        } else {
            skipped.append(SkippedCheck(check: .signature, reason: "signature NOT checked (insecure)", requested: true))
            checks.removeLast()
        }

        let now = clock()
        checks.append(.expiry)
        if let expiresAt = statement.expiresAt {
            let limit = expiresAt.adding(milliseconds: leewayMilliseconds) ?? .latest
            if now > limit {
                return verdict(
                    .tokenExpired,
                    "the statement expired at \(expiresAt.iso8601) (exp), "
                        + "more than the leeway of \(leewayMilliseconds / 1000) s before \(now.iso8601)",
                    key: key
                )
            }
        } else {
            checks.removeLast()
            skipped.append(SkippedCheck(check: .expiry, reason: "the statement has no 'exp' claim, so it does not expire"))
        }

        checks.append(.issueTime)
        let notBeforeTimes = [("iat", statement.issuedAt), ("nbf", statement.notBefore)]
        if notBeforeTimes.allSatisfy({ $0.1 == nil }) {
            checks.removeLast()
            skipped.append(SkippedCheck(check: .issueTime, reason: "the statement has neither 'iat' nor 'nbf'"))
        }
        let latestStart = now.adding(milliseconds: leewayMilliseconds) ?? .latest
        for (name, time) in notBeforeTimes {
            if let time, time > latestStart {
                return verdict(
                    .tokenNotYetValid,
                    "'\(name)' is \(time.iso8601), more than the leeway of "
                        + "\(leewayMilliseconds / 1000) s after \(now.iso8601)",
                    key: key
                )
            }
        }

        let by = key.map { "verified by \($0.description)" } ?? "signature NOT checked"
        let proof = VerifiedSoftwareStatement(statement: statement, keyDescription: key?.description)
        return verdict(.validToken, "\(statement.algorithmName ?? "?") statement \(by)", key: key, verified: proof)
    }

    struct SignatureFailure: Error {
        var reason: String
    }

    /// The trusted key that verifies the statement, or why none does.
    func checkSignature(_ statement: SoftwareStatement, keys: [JWSVerificationKey]) -> Result<JWSVerificationKey, SignatureFailure> {
        let algorithm: JWSAlgorithm
        switch JWSAlgorithm.named(statement.algorithmName ?? "") {
        case .success(let allowed): algorithm = allowed
        case .failure(let refusal): return .failure(SignatureFailure(reason: refusal.message))
        }
        let offered = Self.keyCarryingHeaderMembers.filter { statement.header[$0] != nil }
        let ignored =
            offered.isEmpty
            ? ""
            : "; the header's \(offered.map { "'\($0)'" }.joined(separator: ", ")) never supplies a key"

        var candidates: [JWSVerificationKey]
        if let kid = statement.keyID {
            candidates = keys.filter { $0.keyID == kid }
            if candidates.isEmpty { candidates = keys.filter { $0.keyID == nil } }
            if candidates.isEmpty {
                return .failure(
                    SignatureFailure(reason: "no key with kid \(TerminalText.quoted(kid)) among the \(keys.count) trusted keys\(ignored)")
                )
            }
        } else {
            candidates = keys.filter { $0.keyID == nil }
            if candidates.isEmpty { candidates = keys }
        }
        for name in ["x5t#S256", "x5t"] {
            if let thumbprint = statement.header[name]?.stringValue {
                let matching = candidates.filter { $0.thumbprints[name] == thumbprint }
                if !matching.isEmpty { candidates = matching }
            }
        }
        guard !candidates.isEmpty else {
            return .failure(SignatureFailure(reason: "no trusted key to check the statement with\(ignored)"))
        }
        let fitting = candidates.filter { $0.misfit(for: algorithm) == nil }
        guard !fitting.isEmpty else {
            return .failure(SignatureFailure(reason: (candidates.first?.misfit(for: algorithm) ?? "no key fits") + ignored))
        }
        let message = statement.signingInput
        for key in fitting where key.isValidSignature(statement.signature, for: message, algorithm: algorithm) {
            return .success(key)
        }
        let tried = fitting.count == 1 ? fitting[0].description : "any of \(fitting.count) \(algorithm.keyFamily.rawValue) keys"
        return .failure(SignatureFailure(reason: "the \(algorithm.rawValue) signature does not verify with \(tried)\(ignored)"))
    }
}
