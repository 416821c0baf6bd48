internal import Synchronization

/// Decides whether a token may be trusted: decode, verify the signature, then
/// run the checks in the order of docs/DESIGN.md#statuses; the first failure decides.
///
/// Create one when the server starts and share it: it is `Sendable`, parses
/// keys once, and keeps a pool of decoders (each owning a libxml2 context) so
/// concurrent requests never set up a parser or an OpenSSL context per token.
/// What differs per request — the resource, the device — is an argument of
/// `verify` (``RequestExpectations``); what is the same for every request is
/// the ``VerificationPolicy`` given here. Keys can be replaced while serving
/// (``replaceKeys(with:)``): each verification reads the key ring once, so it
/// sees the old ring or the new one, never none.
///
/// `verify` comes in two forms. The asynchronous one is for servers: it waits
/// for a replay store that does I/O, up to ``VerificationPolicy/replayDeadline``.
/// The synchronous one is for threads (the CLI, in-process servers): it needs
/// a store that can answer without waiting (``InMemoryReplayStore``); with any
/// other store it answers `REPLAY_CHECK_UNAVAILABLE` rather than block.
public final class TokenVerifier: Sendable {
    /// The limits and leniences tokens are decoded with.
    public let decoderConfiguration: DecoderConfiguration
    @usableFromInline let decoders: TokenDecoderPool
    private let leewayMilliseconds: Int64
    private let clock: @Sendable () -> TokenTimestamp
    private let requestor: RequestorPolicy?
    private let mvpds: MVPDPolicy?
    private let replay: ReplayPolicy?
    /// Whether a valid media token still waits for the replay store (see ``evaluate(_:expecting:)``).
    var checksReplays: Bool { replay != nil }
    private let replayDeadline: Duration
    private let state: Mutex<State>

    /// What a verification reads once, under the lock: the trust (keys) and
    /// the plans of checks made for the expectations seen, reused while the
    /// keys stay (a gate serves many resources: one slot missed on each).
    private struct State {
        var trust: Trust
        var generation = 0
        var plans: [RequestExpectations: CheckPlan] = [:]
    }

    /// Plans kept at most; past it the cache starts again (a device id is part
    /// of the expectations, so a busy gate sees many).
    static let maximumPlans = 256

    /// A verifier with its signature requirement, policy and decoder configuration.
    public init(
        signature: SignatureRequirement,
        policy: VerificationPolicy = .init(),
        decoderConfiguration: DecoderConfiguration = .default
    ) {
        self.decoderConfiguration = decoderConfiguration
        decoders = TokenDecoderPool.shared(for: decoderConfiguration)
        leewayMilliseconds = max(0, policy.leewayMilliseconds)
        clock = policy.clock
        requestor = policy.requestorID.map { RequestorPolicy(expected: $0) }
        mvpds = policy.allowedMVPDs.map { MVPDPolicy(allowed: $0) }
        replay = policy.replayStore.map { ReplayPolicy(store: $0, leewayMilliseconds: max(0, policy.leewayMilliseconds)) }
        replayDeadline = policy.replayDeadline
        state = Mutex(State(trust: Trust(signature)))
    }

    /// How signatures are checked now (the ring changes with ``replaceKeys(with:)``).
    public var signature: SignatureRequirement {
        state.withLock { $0.trust.requirement }
    }

    /// Trusts `ring` from now on, in place of the keys before: for key rotation
    /// without a restart. Verifications under way finish with the ring they
    /// started with. A ring with no key is refused (the old ring stays).
    public func replaceKeys(with ring: KeyRing) throws(KeyError) {
        guard !ring.keys.isEmpty else {
            throw KeyError(.noKeysFound, "", "a key ring with no key would refuse every token; the old keys stay")
        }
        let trust = Trust(.trustedKeys(ring))
        state.withLock { state in
            state.trust = trust
            state.generation &+= 1
            state.plans = [:]
        }
    }

    /// Loads the keys under `paths` and trusts them, or throws and keeps the
    /// old ones: a failed reload never leaves the verifier without keys.
    @discardableResult
    public func reloadKeys(paths: [String], options: KeyLoadingOptions = .init()) throws(KeyError) -> KeyRing {
        let ring = try KeyRing.load(paths: paths, options: options)
        try replaceKeys(with: ring)
        return ring
    }

    // MARK: Verifying

    /// Decodes and verifies one token in any transport form, or a REST JSON
    /// document that holds one token (a document with several: give it to a
    /// ``VerificationStream``, or cut it with a ``RecordSplitter``).
    ///
    /// Inlinable so that a caller's collection type is specialised where it is
    /// known (an `[UInt8]` reaches its bytes directly, not through witness calls).
    @inlinable
    public func verify(
        _ record: some Collection<UInt8>,
        envelope: RESTEnvelope? = nil,
        expecting expectations: RequestExpectations = .init()
    ) async -> Verdict {
        switch decode(record, envelope: envelope) {
        case .success(let token): await verify(token, expecting: expectations)
        case .failure(let error): Self.formatVerdict(error)
        }
    }

    /// The same, for a token given as text.
    public func verify(_ text: String, expecting expectations: RequestExpectations = .init()) async -> Verdict {
        await verify(Array(text.utf8), expecting: expectations)
    }

    /// Verifies a record cut by a ``RecordSplitter`` (its own cut-out error becomes the verdict).
    public func verify(_ record: TokenRecord, expecting expectations: RequestExpectations = .init()) async -> Verdict {
        if let error = record.error { return Verdict(formatError: error) }
        return await verify(record.bytes, envelope: record.envelope, expecting: expectations)
    }

    /// Verifies an already decoded token.
    public func verify(_ token: DecodedToken, expecting expectations: RequestExpectations = .init()) async -> Verdict {
        switch evaluate(token, expecting: expectations) {
        case .decided(let verdict):
            return verdict
        case .awaitingReplay(let provisional, let pending):
            return settle(provisional, with: await decideReplay(pending))
        }
    }

    /// Synchronous `verify`, for threads. Needs a replay store that answers
    /// without waiting; any other gives `REPLAY_CHECK_UNAVAILABLE`.
    @inlinable
    public func verify(
        _ record: some Collection<UInt8>,
        envelope: RESTEnvelope? = nil,
        expecting expectations: RequestExpectations = .init()
    ) -> Verdict {
        switch decode(record, envelope: envelope) {
        case .success(let token): verify(token, expecting: expectations)
        case .failure(let error): Self.formatVerdict(error)
        }
    }

    /// Verifies a token given as captured text (any transport form; a URL, quotes or `Bearer` around it are unwrapped with a warning).
    public func verify(_ text: String, expecting expectations: RequestExpectations = .init()) -> Verdict {
        verify(Array(text.utf8), expecting: expectations)
    }

    /// Verifies a record cut by ``RecordSplitter``.
    public func verify(_ record: TokenRecord, expecting expectations: RequestExpectations = .init()) -> Verdict {
        if let error = record.error { return Verdict(formatError: error) }
        return verify(record.bytes, envelope: record.envelope, expecting: expectations)
    }

    /// Verifies a token that is already decoded.
    public func verify(_ token: DecodedToken, expecting expectations: RequestExpectations = .init()) -> Verdict {
        switch evaluate(token, expecting: expectations) {
        case .decided(let verdict):
            return verdict
        case .awaitingReplay(let provisional, let pending):
            return settle(provisional, with: decideReplayWithoutWaiting(pending))
        }
    }

    // MARK: Steps (internal: the stream engine decides replays in input order)

    @usableFromInline
    static func formatVerdict(_ error: TokenError) -> Verdict {
        Verdict(formatError: error)
    }

    @inlinable
    func decode(_ record: some Collection<UInt8>, envelope: RESTEnvelope?) -> Result<DecodedToken, TokenError> {
        // An array or array slice is read in place; other collections are copied once.
        if let array = record as? [UInt8] { return decode(contiguous: array.span, envelope: envelope) }
        if let slice = record as? ArraySlice<UInt8> { return decode(contiguous: slice.span, envelope: envelope) }
        // A token taken from a request (the gate's query parameter) is read where it lies.
        if let text = record as? Substring.UTF8View { return decode(contiguous: text.span, envelope: envelope) }
        if let text = record as? String.UTF8View { return decode(contiguous: text.span, envelope: envelope) }
        let copy = Array(record)
        return decode(contiguous: copy.span, envelope: envelope)
    }

    @usableFromInline
    func decode(contiguous record: Span<UInt8>, envelope: RESTEnvelope?) -> Result<DecodedToken, TokenError> {
        if envelope == nil, Self.isJSONDocument(record) { return decodeDocument(record) }
        return decoders.withDecoder { decoder in
            Result { () throws(TokenError) in try decoder.decode(record, envelope: envelope) }
        }
    }

    /// True when the first byte that is not white space (or a BOM) is `{`:
    /// a REST JSON response, given whole.
    private static func isJSONDocument(_ bytes: Span<UInt8>) -> Bool {
        var index = ByteRules.startsWithByteOrderMark(bytes) ? ByteRules.byteOrderMarkCount : 0
        while index < bytes.count, bytes[index].isASCIIWhitespace { index += 1 }
        return index < bytes.count && bytes[index] == UInt8(ascii: "{")
    }

    /// A REST response holding one token is that token, with its envelope; one
    /// holding several names the entry point that takes them all.
    private func decodeDocument(_ document: Span<UInt8>) -> Result<DecodedToken, TokenError> {
        var splitter = RecordSplitter(configuration: decoderConfiguration)
        let records = splitter.feed(document) + splitter.finish()
        guard records.count == 1, let record = records.first else {
            return .failure(
                TokenError(
                    .severalTokens,
                    stage: .transport,
                    "the REST document holds \(records.count) tokens; verify each record a RecordSplitter or VerificationStream cuts from it"
                )
            )
        }
        return decoders.decode(record)
    }

    /// A token's verdict, or — when every check before the replay check
    /// passed — the verdict it gets if the replay store accepts it.
    enum Evaluation: Sendable {
        case decided(Verdict)
        case awaitingReplay(Verdict, PendingReplay)
    }

    /// What the replay store is asked for one token.
    struct PendingReplay: Sendable {
        var store: any ReplayStore
        var identity: ReplayIdentity
        var until: TokenTimestamp
        /// The instant the token was judged at: the store records it as of then.
        var now: TokenTimestamp
    }

    func evaluate(_ token: DecodedToken, expecting expectations: RequestExpectations) -> Evaluation {
        let plan = plan(for: expectations)
        var key: PublicKey? = nil
        var reason = "every configured check passed"
        // SHA-256 of the signed bytes, made once: by the first key that
        // needs it, else by the replay check; every verdict carries it
        // (inline: an identity is made of it only when asked).
        var digest = SignedMessageDigest()
        var signatureByteCount: Int? = nil
        if let ring = plan.trust.ring {
            switch Self.verifySignature(of: token, with: ring, digest: &digest, signatureByteCount: &signatureByteCount) {
            case .success(let verifyingKey):
                key = verifyingKey
                reason = plan.trust.validReason(for: verifyingKey)
            case .failure(let failure):
                return .decided(
                    Verdict(
                        status: .invalidSignature,
                        reason: failure.reason,
                        token: token,
                        key: nil,
                        checksRun: plan.trust.checksBeforePolicies,
                        checksSkipped: plan.skippedAlways,
                        digest: digest,
                        signatureByteCount: signatureByteCount
                    )
                )
            }
        }
        let now = expectations.now ?? clock()
        let run: [VerificationCheck]
        let skipped: [SkippedCheck]
        switch plan.runPolicies(token, now: now) {
        case .failed(let status, let why, let checksRun, let checksSkipped):
            return .decided(
                Verdict(
                    status: status,
                    reason: why,
                    token: token,
                    key: key,
                    checksRun: checksRun,
                    checksSkipped: checksSkipped,
                    digest: digest,
                    signatureByteCount: signatureByteCount
                )
            )
        case .passed(let checksRun, let checksSkipped):
            run = checksRun
            skipped = checksSkipped
        }
        guard let replay else {
            return .decided(
                Verdict(
                    status: .validToken,
                    reason: reason,
                    token: token,
                    key: key,
                    checksRun: run,
                    checksSkipped: skipped,
                    digest: digest,
                    signatureByteCount: signatureByteCount
                )
            )
        }
        switch replay.pending(for: token, digest: &digest) {
        case .skip(let why):
            // The plan lists the replay check last, as if it ran; it did not.
            return .decided(
                Verdict(
                    status: .validToken,
                    reason: reason,
                    token: token,
                    key: key,
                    checksRun: Array(run.dropLast()),
                    checksSkipped: skipped + [SkippedCheck(check: .replay, reason: why, requested: true)],
                    digest: digest,
                    signatureByteCount: signatureByteCount
                )
            )
        case .ask(let identity, let until):
            let provisional = Verdict(
                status: .validToken,
                reason: reason,
                token: token,
                key: key,
                checksRun: run,
                checksSkipped: skipped,
                digest: digest,
                signatureByteCount: signatureByteCount
            )
            return .awaitingReplay(provisional, PendingReplay(store: replay.store, identity: identity, until: until, now: now))
        }
    }

    func decideReplayWithoutWaiting(_ pending: PendingReplay) -> ReplayDecision {
        pending.store.acceptWithoutWaiting(pending.identity, until: pending.until, now: pending.now)
            ?? .unavailable("the replay store answers only asynchronously; use the async verify")
    }

    /// The store's answer, or `.unavailable` once the deadline passes: the
    /// caller never waits longer, and a store that hangs holds no request.
    /// One deadline: the store keeps it (``ReplayStore/accept(_:until:now:within:)``);
    /// the verifier starts no task or timer of its own.
    func decideReplay(_ pending: PendingReplay) async -> ReplayDecision {
        if let decision = pending.store.acceptWithoutWaiting(pending.identity, until: pending.until, now: pending.now) {
            return decision
        }
        return await pending.store.accept(pending.identity, until: pending.until, now: pending.now, within: replayDeadline)
    }

    /// The verdict once the store decided: the provisional valid verdict when
    /// it accepted, else a refusal that keeps the checks that ran.
    func settle(_ provisional: Verdict, with decision: ReplayDecision) -> Verdict {
        guard let result = ReplayPolicy.refusal(for: decision) else { return provisional }
        return Verdict(
            status: result.status,
            reason: result.reason,
            token: provisional.token,
            key: provisional.key,
            checksRun: provisional.checksRun,
            checksSkipped: provisional.checksSkipped,
            digest: provisional.digest,
            signatureByteCount: provisional.signatureByteCount
        )
    }

    // MARK: Plans

    /// How many plans are kept now (for tests).
    var keptPlanCount: Int { state.withLock { $0.plans.count } }

    /// The plan for `expectations`: a kept one when a request expected the
    /// same before (a CLI run, each resource a server serves), else made
    /// anew — outside the lock, kept unless the keys changed meanwhile.
    private func plan(for request: RequestExpectations) -> CheckPlan {
        let expectations = request.withoutTime
        let (kept, trust, generation) = state.withLock { ($0.plans[expectations], $0.trust, $0.generation) }
        if let kept { return kept }
        let plan = makePlan(expectations, trust: trust)
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.plans.count >= Self.maximumPlans { state.plans.removeAll(keepingCapacity: true) }
            state.plans[expectations] = plan
        }
        return plan
    }

    private func makePlan(_ expectations: RequestExpectations, trust: Trust) -> CheckPlan {
        var policies: [any TokenPolicy] = [
            ExpiryPolicy(leewayMilliseconds: leewayMilliseconds),
            IssueTimePolicy(leewayMilliseconds: leewayMilliseconds),
        ]
        var skipped = trust.skippedSignature
        if let requestor { policies.append(requestor) } else { skipped.append(.init(check: .requestor, reason: "no expected requestor configured")) }
        if let resource = expectations.resourceID {
            policies.append(ResourcePolicy(expected: resource, configuration: decoderConfiguration))
        } else {
            skipped.append(.init(check: .resource, reason: "no expected resource given"))
        }
        if let mvpds { policies.append(mvpds) } else { skipped.append(.init(check: .mvpd, reason: "no MVPD allow-list configured")) }
        if let device = expectations.device {
            policies.append(DevicePolicy(expected: device))
        } else {
            skipped.append(.init(check: .device, reason: "no expected device given"))
        }
        var checks = trust.checksBeforePolicies + policies.map(\.check)
        if replay == nil {
            skipped.append(.init(check: .replay, reason: "replay protection not enabled"))
        } else {
            checks.append(.replay)
        }
        return CheckPlan(
            expectations: expectations,
            trust: trust,
            policies: policies,
            skippedAlways: skipped,
            checksAllPassed: checks
        )
    }

    // MARK: Signature

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
    private static func verifySignature(
        of token: DecodedToken,
        with ring: KeyRing,
        digest: inout SignedMessageDigest,
        signatureByteCount: inout Int?
    ) -> Result<PublicKey, SignatureFailure> {
        let text = token.xml[token.frame.signatureText]
        if !text.contains(where: { !$0.isASCIIWhitespace }) {
            return .failure(SignatureFailure(reason: "signatureInfo is empty: the token carries no signature"))
        }
        let signature: [UInt8]
        do {
            signature = try Base64.decode(text.span, whitespace: .any).bytes
        } catch {
            return .failure(SignatureFailure(reason: "signatureInfo is not valid Base64 (at its byte \(error.offset))"))
        }
        signatureByteCount = signature.count
        let verifyingKey = ring.verifyingKey(for: signature, message: token.signedBytes.span, digest: &digest)
        if let verifyingKey { return .success(verifyingKey) }
        var reason =
            "no trusted key verifies the signature (\(signature.count) bytes; \(ring.keys.count) trusted key\(ring.keys.count == 1 ? "" : "s"))"
        if !ring.keys.contains(where: { Self.signatureSizes(of: $0).contains(signature.count) }) {
            // The commonest support case: a token from an old RSA-1024 issuer, or a key mix-up.
            let shape = [128, 256, 384, 512].contains(signature.count) ? " (RSA-\(signature.count * 8)-sized)" : ""
            reason = "no trusted key verifies the signature: it is \(signature.count) bytes\(shape), and no trusted key makes signatures of that size"
        }
        return .failure(SignatureFailure(reason: reason))
    }
}

/// How signatures are checked, with what the verdicts say about it made once
/// per ring rather than per token.
private final class Trust: Sendable {
    let requirement: SignatureRequirement
    let ring: KeyRing?
    /// The reason of a valid verdict for each trusted key, in ring order.
    let validReasons: [String]
    let checksBeforePolicies: [VerificationCheck]
    let skippedSignature: [SkippedCheck]

    init(_ requirement: SignatureRequirement) {
        self.requirement = requirement
        switch requirement {
        case .insecureSkipped:
            ring = nil
            validReasons = []
            checksBeforePolicies = [.format]
            skippedSignature = [SkippedCheck(check: .signature, reason: "signature checking switched off (insecure)")]
        case .trustedKeys(let ring):
            self.ring = ring
            validReasons = ring.keys.map { "every configured check passed (verified by \($0.description))" }
            checksBeforePolicies = [.format, .signature]
            skippedSignature = []
        }
    }

    func validReason(for key: PublicKey) -> String {
        if let ring, let index = ring.keys.firstIndex(where: { $0.storage === key.storage }) {
            return validReasons[index]
        }
        return "every configured check passed (verified by \(key.description))"
    }
}

/// The checks for one set of expectations under one trust, in the order of docs/DESIGN.md#statuses,
/// with the verdict's lists made once: a verdict shares them instead of
/// building arrays per token.
private final class CheckPlan: Sendable {
    let expectations: RequestExpectations
    let trust: Trust
    /// Expiry, issue time, then the configured ones; the replay check is not
    /// here (it may wait for a store) but is listed in `checksAllPassed`.
    let policies: [any TokenPolicy]
    /// Checks not configured: skipped whatever the token.
    let skippedAlways: [SkippedCheck]
    let checksAllPassed: [VerificationCheck]

    init(
        expectations: RequestExpectations,
        trust: Trust,
        policies: [any TokenPolicy],
        skippedAlways: [SkippedCheck],
        checksAllPassed: [VerificationCheck]
    ) {
        self.expectations = expectations
        self.trust = trust
        self.policies = policies
        self.skippedAlways = skippedAlways
        self.checksAllPassed = checksAllPassed
    }

    enum PolicyOutcome {
        case failed(VerificationStatus, String, checksRun: [VerificationCheck], checksSkipped: [SkippedCheck])
        /// Every policy passed or skipped; the lists end with the replay
        /// check when one is configured (it runs next).
        case passed(checksRun: [VerificationCheck], checksSkipped: [SkippedCheck])
    }

    /// Runs the policies in order up to the first failure. When all pass (the
    /// common case) the lists are the ones made with the plan; otherwise they
    /// are built as the checks run.
    func runPolicies(_ token: DecodedToken, now: TokenTimestamp) -> PolicyOutcome {
        var index = 0
        while index < policies.count {
            let result = policies[index].evaluate(token, now: now)
            guard case .pass = result else { return listedOutcome(token, now: now, passed: index, then: result) }
            index += 1
        }
        return .passed(checksRun: checksAllPassed, checksSkipped: skippedAlways)
    }

    /// The outcome once policy `passed` returned `result`, not a pass (the
    /// policies before it passed): the rest run as they always do.
    private func listedOutcome(_ token: DecodedToken, now: TokenTimestamp, passed: Int, then result: PolicyResult) -> PolicyOutcome {
        var run = trust.checksBeforePolicies
        var skipped = skippedAlways
        for policy in policies[..<passed] { run.append(policy.check) }
        var index = passed
        var result = result
        while true {
            let policy = policies[index]
            switch result {
            case .pass:
                run.append(policy.check)
            case .skip(let why):
                // Expiry and issue time are always on: skipping one was not asked for.
                skipped.append(SkippedCheck(check: policy.check, reason: why, requested: policy.check != .issueTime))
            case .fail(let status, let why):
                run.append(policy.check)
                return .failed(status, why, checksRun: run, checksSkipped: skipped)
            }
            index += 1
            guard index < policies.count else { break }
            result = policies[index].evaluate(token, now: now)
        }
        if checksAllPassed.last == .replay { run.append(.replay) }
        return .passed(checksRun: run, checksSkipped: skipped)
    }
}
