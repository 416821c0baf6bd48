internal import Synchronization

/// Decides whether a token may be trusted: decode, verify the signature,
/// then run the configured policies in SPEC §5 order; the first failure decides.
///
/// Create one when the server starts and share it: it is `Sendable`, parses
/// keys once, and keeps a pool of decoders (each owning a libxml2 context)
/// so concurrent requests never set up a parser or an OpenSSL context per token.
public final class TokenVerifier: Sendable {
    public let signature: SignatureRequirement
    public let decoderConfiguration: DecoderConfiguration
    private let leewayMilliseconds: Int64
    private let clock: @Sendable () -> TokenTimestamp
    private let policies: [any TokenPolicy]
    private let skipped: [(check: VerificationCheck, reason: String)]
    @usableFromInline let decoders: TokenDecoderPool
    /// The reason of a valid verdict for each trusted key, in ring order, made
    /// once here rather than formatted again for every valid token.
    private let validReasons: [String]
    /// The verdict's lists when the signature check fails (`[.format, .signature]`),
    /// and when every policy passes: made once here, so a verdict shares them
    /// instead of building an array per token.
    private let checksBeforePolicies: [VerificationCheck]
    private let skippedBeforePolicies: [(check: VerificationCheck, reason: String)]
    private let checksAllPassed: [VerificationCheck]

    public init(signature: SignatureRequirement, policy: VerificationPolicy = .init(),
                decoderConfiguration: DecoderConfiguration = .default) {
        self.signature = signature
        self.decoderConfiguration = decoderConfiguration
        leewayMilliseconds = max(0, policy.leewayMilliseconds)
        clock = policy.clock
        decoders = TokenDecoderPool(configuration: decoderConfiguration)

        var policies: [any TokenPolicy] = [
            ExpiryPolicy(leewayMilliseconds: leewayMilliseconds),
            IssueTimePolicy(leewayMilliseconds: leewayMilliseconds),
        ]
        var skipped: [(VerificationCheck, String)] = []
        if let requestor = policy.requestorID {
            policies.append(RequestorPolicy(expected: requestor))
        } else { skipped.append((.requestor, "no expected requestor configured")) }
        if let resource = policy.resourceID {
            policies.append(decoders.withDecoder { ResourcePolicy(expected: resource, parser: $0.parser) })
        } else { skipped.append((.resource, "no expected resource configured")) }
        if let mvpds = policy.allowedMVPDs {
            policies.append(MVPDPolicy(allowed: mvpds))
        } else { skipped.append((.mvpd, "no MVPD allow-list configured")) }
        if let device = policy.device {
            policies.append(DevicePolicy(expected: device))
        } else { skipped.append((.device, "no expected device configured")) }
        if let store = policy.replayStore {
            policies.append(ReplayPolicy(store: store, leewayMilliseconds: leewayMilliseconds))
        } else { skipped.append((.replay, "replay protection not enabled")) }
        self.policies = policies
        self.skipped = skipped
        // As `verify(_:)` builds them (see there).
        switch signature {
        case .insecureSkipped:
            checksBeforePolicies = [.format]
            skippedBeforePolicies = [(.signature, "signature checking switched off (insecure)")] + skipped
        case .trustedKeys:
            checksBeforePolicies = [.format, .signature]
            skippedBeforePolicies = skipped
        }
        checksAllPassed = checksBeforePolicies + policies.map(\.check)
        if case .trustedKeys(let ring) = signature {
            validReasons = ring.keys.map { "every configured check passed (verified by \($0.description))" }
        } else {
            validReasons = []
        }
    }

    /// Decodes and verifies one token in any transport form but a REST JSON document.
    ///
    /// Inlinable so that a caller's collection type is specialised where it is
    /// known, as for `TokenDecoder.decode(_:envelope:)`.
    @inlinable
    public func verify(_ record: some Collection<UInt8>, envelope: RESTEnvelope? = nil) -> Verdict {
        let decoded = decoders.withDecoder { decoder in
            Result { () throws(TokenError) in try decoder.decode(record, envelope: envelope) }
        }
        switch decoded {
        case .success(let token): return verify(token)
        case .failure(let error): return Self.formatVerdict(error)
        }
    }

    public func verify(_ text: String) -> Verdict {
        verify(Array(text.utf8))
    }

    /// Verifies a record cut by a ``RecordSplitter`` (its own cut-out error becomes the verdict).
    public func verify(_ record: TokenRecord) -> Verdict {
        if let error = record.error { return Self.formatVerdict(error) }
        return verify(record.bytes, envelope: record.envelope)
    }

    /// The verdict for a token that could not be decoded.
    public static func formatVerdict(_ error: TokenError) -> Verdict {
        Verdict(status: .invalidTokenFormat, reason: error.description, token: nil, formatError: error, verified: nil,
                key: nil, checksRun: [.format], checksSkipped: [])
    }

    /// Verifies an already decoded token.
    public func verify(_ token: DecodedToken) -> Verdict {
        var key: PublicKey? = nil
        var reason = "every configured check passed"
        switch signature {
        case .insecureSkipped:
            break
        case .trustedKeys(let ring):
            switch Self.verifySignature(of: token, with: ring) {
            case .success(let verifyingKey):
                key = verifyingKey
                if let index = ring.keys.firstIndex(where: { $0.storage === verifyingKey.storage }) {
                    reason = validReasons[index]
                } else {
                    reason = "every configured check passed (verified by \(verifyingKey.description))"
                }
            case .failure(let failure):
                return Verdict(status: .invalidSignature, reason: failure.reason, token: token, formatError: nil, verified: nil,
                               key: nil, checksRun: checksBeforePolicies, checksSkipped: skippedBeforePolicies)
            }
        }
        let now = clock()
        // The policies in order, each once, up to the first that does not pass.
        // When all pass (the common case), the verdict's lists are the ones made
        // in `init`; otherwise they are built as the checks ran.
        var passed = 0
        var other: PolicyResult? = nil
        policies.withUnsafeBufferPointer { policies in
            while passed < policies.count {
                let result = policies[passed].evaluate(token, now: now)
                guard case .pass = result else {
                    other = result
                    return
                }
                passed += 1
            }
        }
        guard let other else {
            return Verdict(status: .validToken, reason: reason, token: token, formatError: nil,
                           verified: VerifiedToken(decoded: token, key: key), key: key,
                           checksRun: checksAllPassed, checksSkipped: skippedBeforePolicies)
        }
        return listedVerdict(token, key: key, reason: reason, now: now, passed: passed, then: other)
    }

    /// The verdict once policy `passed` returned `result`, not a pass (the
    /// policies before it passed): the rest of the policies run as they always
    /// did, and the lists of checks run and skipped are built as they run.
    private func listedVerdict(_ token: DecodedToken, key: PublicKey?, reason: String, now: TokenTimestamp,
                               passed: Int, then result: PolicyResult) -> Verdict {
        var run = checksBeforePolicies
        run.reserveCapacity(checksBeforePolicies.count + policies.count)
        var skipped = skippedBeforePolicies
        for policy in policies[..<passed] { run.append(policy.check) }
        var index = passed
        var result = result
        while true {
            let policy = policies[index]
            switch result {
            case .pass:
                run.append(policy.check)
            case .skip(let reason):
                skipped.append((policy.check, reason))
            case .fail(let status, let reason):
                run.append(policy.check)
                return Verdict(status: status, reason: reason, token: token, formatError: nil, verified: nil,
                               key: key, checksRun: run, checksSkipped: skipped)
            }
            index += 1
            guard index < policies.count else { break }
            result = policies[index].evaluate(token, now: now)
        }
        return Verdict(status: .validToken, reason: reason, token: token, formatError: nil,
                       verified: VerifiedToken(decoded: token, key: key), key: key, checksRun: run, checksSkipped: skipped)
    }

    private struct SignatureFailure: Error { var reason: String }

    /// Signature sizes a key can produce: RSA modulus bytes, Ed25519 64,
    /// ECDSA P-256 64 (raw r‖s) or 8…72 (DER).
    private static func signatureSizes(of key: PublicKey) -> ClosedRange<Int> {
        switch key.algorithm {
        case .rsaPKCS1SHA256, .rsaPSSSHA256: return (key.bits + 7) / 8...(key.bits + 7) / 8
        case .ed25519: return 64...64
        case .ecdsaP256SHA256: return 8...72
        }
    }

    /// The key that verifies the token's signed bytes, or why none does.
    private static func verifySignature(of token: DecodedToken, with ring: KeyRing) -> Result<PublicKey, SignatureFailure> {
        let text = token.xml[token.frame.signatureText]
        if !text.contains(where: { !$0.isASCIIWhitespace }) {
            return .failure(SignatureFailure(reason: "signatureInfo is empty: the token carries no signature"))
        }
        let signature: [UInt8]
        do {
            signature = try text.withUnsafeBufferPointer { (buffer) throws(Base64.Failure) in
                try Base64.decode(buffer, whitespace: .any)
            }.bytes
        } catch {
            return .failure(SignatureFailure(reason: "signatureInfo is not valid Base64 (at its byte \(error.offset))"))
        }
        let verifyingKey = token.signedBytes.withUnsafeBytes { ring.verifyingKey(for: signature, message: $0) }
        if let verifyingKey { return .success(verifyingKey) }
        var reason = "no trusted key verifies the signature (\(signature.count) bytes; \(ring.keys.count) trusted key\(ring.keys.count == 1 ? "" : "s"))"
        if !ring.keys.contains(where: { Self.signatureSizes(of: $0).contains(signature.count) }) {
            // The commonest support case: a token from an old RSA-1024 issuer, or a key mix-up.
            let shape = [128, 256, 384, 512].contains(signature.count) ? " (RSA-\(signature.count * 8)-sized)" : ""
            reason = "no trusted key verifies the signature: it is \(signature.count) bytes\(shape), and no trusted key makes signatures of that size"
        }
        return .failure(SignatureFailure(reason: reason))
    }
}

/// Decoders for concurrent callers: each owns a libxml2 context and is used
/// by one caller at a time, then kept for the next. `Sendable`, so one pool
/// can serve every thread of a server or a parallel CLI run.
public final class TokenDecoderPool: Sendable {
    /// `TokenDecoder` is not Sendable, but each one is only ever touched by
    /// the single caller that took it out of the pool.
    private let idle = ThreadAffinePool<TokenDecoder>()
    public let configuration: DecoderConfiguration

    public init(configuration: DecoderConfiguration = .default) {
        self.configuration = configuration
    }

    @usableFromInline
    func withDecoder<Result>(_ body: (TokenDecoder) -> Result) -> Result {
        let decoder = idle.take() ?? TokenDecoder(configuration: configuration)
        defer { idle.give(decoder) }
        return body(decoder)
    }

    /// Decodes one record cut by a ``RecordSplitter``.
    public func decode(_ record: TokenRecord) -> Result<DecodedToken, TokenError> {
        if let error = record.error { return .failure(error) }
        return withDecoder { decoder in
            Result { () throws(TokenError) in try decoder.decode(record.bytes, envelope: record.envelope) }
        }
    }
}
