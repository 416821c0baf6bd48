import Foundation
import Synchronization
import Testing

@testable import EntitlementTokens

/// Issue 11 / docs/DESIGN.md#the-library-api-for-servers: one verifier built at start-up, expectations per
/// request, replay stores that answer asynchronously and may fail, keys
/// replaced while serving, and a trust boundary the types keep.
@Suite struct ServerAPITests {
    static func verifier(
        _ ring: KeyRing = Minting.ring("test-rsa2048.pub.pem"),
        store: (any ReplayStore)? = InMemoryReplayStore(),
        deadline: Duration = .milliseconds(250)
    ) -> TokenVerifier {
        TokenVerifier(
            signature: .trustedKeys(ring),
            policy: VerificationPolicy(
                requestorID: "TNT",
                allowedMVPDs: ["Comcast_SSO"],
                replayStore: store,
                replayDeadline: deadline,
                clock: { Minting.issued }
            )
        )
    }

    static func mediaToken(_ index: Int, resource: String, key: SigningKey = Minting.key()) -> String {
        var request = Minting.request(.media, resource: resource)
        request.sessionGUID = "session-\(index)"
        return Minting.token(request, key: key)
    }

    // MARK: Per-request expectations

    @Test func oneVerifierManyResourcesAndDevicesConcurrently() async {
        let verifier = Self.verifier()
        let resources = (0..<10).map { "channel-\($0)" }
        // 500 media tokens (one-time use) and 500 authorization tokens (device-bound, reusable).
        struct Case: Sendable {
            var token: String
            var expectations: RequestExpectations
            var expected: VerificationStatus
        }
        var cases: [Case] = []
        for index in 0..<500 {
            let resource = resources[index % 10]
            let asked = index % 3 == 0 ? resources[(index + 1) % 10] : resource
            cases.append(
                Case(
                    token: Self.mediaToken(index, resource: resource),
                    expectations: RequestExpectations(resourceID: asked),
                    expected: asked == resource ? .validToken : .invalidResourceID
                )
            )
        }
        // One-time use counts only if the 500 media tokens are 500 tokens.
        #expect(Set(cases.map(\.token)).count == 500)
        for index in 0..<500 {
            var request = Minting.request(.authorization, resource: resources[index % 10])
            request.fingerprint = DeviceFingerprint.hash("device-\(index % 7)", hexLength: 64)
            let device = index % 4 == 0 ? "device-\((index + 1) % 7)" : "device-\(index % 7)"
            cases.append(
                Case(
                    token: Minting.token(request),
                    expectations: RequestExpectations(resourceID: resources[index % 10], device: .deviceID(device)),
                    expected: device == "device-\(index % 7)" ? .validToken : .deviceMismatch
                )
            )
        }
        let statuses = await withTaskGroup(of: (Int, VerificationStatus).self) { group in
            for (index, item) in cases.enumerated() {
                group.addTask { (index, await verifier.verify(item.token, expecting: item.expectations).status) }
            }
            return await group.reduce(into: [Int: VerificationStatus]()) { $0[$1.0] = $1.1 }
        }
        for (index, item) in cases.enumerated() {
            #expect(statuses[index] == item.expected, "case \(index)")
        }
        // A media token refused for its resource did not use up its one acceptance.
        for (index, item) in cases.enumerated() where item.expected == .invalidResourceID {
            let right = RequestExpectations(resourceID: resources[index % 10])
            #expect(await verifier.verify(item.token, expecting: right).status == .validToken, "case \(index)")
            #expect(await verifier.verify(item.token, expecting: right).status == .tokenReplayed, "case \(index)")
        }
    }

    /// A gate serves many resources: the plan of each is kept (one slot used
    /// to miss on every request of a round robin), and a key change drops them.
    @Test func plansAreKeptForManyResourcesUntilTheKeysChange() async throws {
        let verifier = Self.verifier(store: nil)
        var request = Minting.request(.authorization, resource: "R0")
        request.ttlMilliseconds = 3_600_000
        for round in 0..<2 {
            for index in 0..<50 {
                let expectations = RequestExpectations(resourceID: "R\(index)")
                _ = await verifier.verify(Minting.token(request), expecting: expectations)
            }
            #expect(verifier.keptPlanCount == 50, "round \(round)")
        }
        try verifier.replaceKeys(with: Minting.ring("test-rsa2048.pub.pem"))
        #expect(verifier.keptPlanCount == 0)
        for index in 0..<(TokenVerifier.maximumPlans + 10) {
            _ = await verifier.verify(Minting.token(request), expecting: RequestExpectations(resourceID: "R\(index)"))
        }
        #expect(verifier.keptPlanCount <= TokenVerifier.maximumPlans)
    }

    /// A request's own "now" (``RequestExpectations/now``) judges every time
    /// check and goes to the replay store, whatever the policy's clock says,
    /// and a verifier keeps one plan for a resource however many instants ask.
    @Test func theRequestsNowJudgesTheTokenAndKeepsOnePlan() async throws {
        let seen = Mutex<[TokenTimestamp]>([])
        struct Recording: ReplayStore {
            let seen: @Sendable (TokenTimestamp) -> Void
            func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
                seen(now)
                return .accepted
            }
        }
        let store = Recording { now in seen.withLock { $0.append(now) } }
        let far = Minting.issued.adding(milliseconds: 365 * 86_400_000)!
        let verifier = TokenVerifier(
            signature: .trustedKeys(Minting.ring("test-rsa2048.pub.pem")),
            policy: VerificationPolicy(
                requestorID: "TNT",
                replayStore: store,
                clock: { far }
            )
        )
        let inTime = Minting.issued.adding(milliseconds: 60_000)!
        let first = await verifier.verify(Self.mediaToken(1, resource: "TNT"), expecting: RequestExpectations(resourceID: "TNT", now: inTime))
        #expect(first.status == .validToken, "\(first.reason)")
        let later = inTime.adding(milliseconds: 1_000)!
        let second = await verifier.verify(Self.mediaToken(2, resource: "TNT"), expecting: RequestExpectations(resourceID: "TNT", now: later))
        #expect(second.status == .validToken)
        #expect(seen.withLock { $0 } == [inTime, later], "the replay store is asked as of the request's now")
        #expect(
            await verifier.verify(Self.mediaToken(3, resource: "TNT"), expecting: RequestExpectations(resourceID: "TNT")).status
                == .tokenExpired,
            "without a now, the policy's clock judges"
        )
        #expect(verifier.keptPlanCount == 1)
    }

    @Test func expectationsCompareBytesNotCanonicalEquivalence() {
        let composed = RequestExpectations(resourceID: "Caf\u{E9}")
        let decomposed = RequestExpectations(resourceID: "Cafe\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        #expect(RequestExpectations(device: .deviceID("\u{212B}")) != RequestExpectations(device: .deviceID("\u{C5}")))
    }

    // MARK: Replay stores that answer asynchronously and can fail

    struct UnavailableStore: ReplayStore {
        func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
            .unavailable("connection refused")
        }
    }

    /// Never answers in time, and ignores cancellation (the worst case).
    struct HangingStore: ReplayStore {
        func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + 3) { continuation.resume(returning: .accepted) }
            }
        }
    }

    /// Holds its answer for one identity until the test opens the gate; quick for every other.
    final class GatedForOneStore: ReplayStore {
        let slow: ReplayIdentity
        let inner = InMemoryReplayStore()
        let gate = Gate()
        init(slow: ReplayIdentity) { self.slow = slow }
        func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
            if identity == slow { await gate.wait() }
            return await inner.accept(identity, until: until, now: now)
        }
    }

    @Test func anUnavailableStoreIsReplayCheckUnavailableNeverValid() async {
        let verdict = await Self.verifier(store: UnavailableStore()).verify(Self.mediaToken(1, resource: "TNT"))
        #expect(verdict.status == .replayCheckUnavailable)
        #expect(verdict.verified == nil)
        #expect(verdict.reason.contains("connection refused"))
        #expect(verdict.checksRun.last == .replay)
    }

    @Test func aStorePastTheDeadlineIsUnavailableWithinIt() async {
        // The store answers `.accepted` after 3 s; the verdict is the deadline's
        // (no wall-clock assertion: parallel test suites can starve the pool).
        let verifier = Self.verifier(store: HangingStore(), deadline: .milliseconds(50))
        let verdict = await verifier.verify(Self.mediaToken(2, resource: "TNT"))
        #expect(verdict.status == .replayCheckUnavailable)
        #expect(verdict.verified == nil)
        #expect(verdict.reason.contains("did not answer within 0.05 seconds"), "\(verdict.reason)")
    }

    @Test func theSynchronousPathFailsClosedWithAnAsyncOnlyStore() {
        let verifier = Self.verifier(store: UnavailableStore())
        let verdict: Verdict = verifier.verify(Self.mediaToken(3, resource: "TNT"))
        #expect(verdict.status == .replayCheckUnavailable)
        // Reusable tokens never touch the store.
        let authorization: Verdict = verifier.verify(Minting.token(Minting.request(.authorization)))
        #expect(authorization.status == .validToken)
    }

    @Test func aSlowStoreDoesNotHoldOtherVerifications() async {
        let slowToken = Self.mediaToken(4, resource: "TNT")
        let decoded = try! TokenDecoder().decode(slowToken)
        let identity = ReplayIdentity(sha256Of: decoded.signedBytes.span)
        let store = GatedForOneStore(slow: identity)
        let verifier = Self.verifier(store: store, deadline: .seconds(600))
        let slowDone = Flag()
        async let slow: VerificationStatus = {
            let status = await verifier.verify(slowToken).status
            slowDone.set()
            return status
        }()
        // The store holds its answer for the slow token until all of these are done.
        for index in 0..<50 {
            #expect(await verifier.verify(Self.mediaToken(100 + index, resource: "TNT")).status == .validToken)
        }
        #expect(!slowDone.isSet, "the slow verification finished before its store answered")
        store.gate.open()
        #expect(await slow == .validToken)
    }

    // MARK: Keys replaced while serving

    @Test func keysReloadUnderConcurrentVerification() async throws {
        let keyA = Minting.key("test-rsa2048.pem")
        let keyB = Minting.key("test-rsa2048-b.pem")
        let verifier = TokenVerifier(
            signature: .trustedKeys(Minting.ring("test-rsa2048.pub.pem")),
            policy: VerificationPolicy(clock: { Minting.issued })
        )
        let tokenA = Minting.token(Minting.request(.authorization), key: keyA)
        let tokenB = Minting.token(Minting.request(.authorization), key: keyB)
        let replaced = Flag()
        let seen = await withTaskGroup(of: [String].self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var odd: [String] = []
                    for round in 0..<400 {
                        let useA = (round + worker) % 2 == 0
                        let verdict: Verdict = await verifier.verify(useA ? tokenA : tokenB)
                        let allowed: Set<VerificationStatus> = [.validToken, .invalidSignature]
                        if !allowed.contains(verdict.status) || verdict.reason.contains("0 trusted keys") {
                            odd.append("\(verdict)")
                        }
                    }
                    return odd
                }
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(20))
                try? verifier.replaceKeys(with: Minting.ring("test-rsa2048-b.pub.pem"))
                replaced.set()
                return []
            }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(replaced.isSet)
        #expect(seen.isEmpty, "\(seen.prefix(3))")
        #expect(await verifier.verify(tokenA).status == .invalidSignature)
        #expect(await verifier.verify(tokenB).status == .validToken)
    }

    @Test func aFailedReloadKeepsTheOldKeys() async throws {
        let verifier = TokenVerifier(
            signature: .trustedKeys(Minting.ring("test-rsa2048.pub.pem")),
            policy: VerificationPolicy(clock: { Minting.issued })
        )
        let token = Minting.token(Minting.request(.authorization))
        #expect(throws: KeyError.self) { try verifier.replaceKeys(with: KeyRing([])) }
        #expect(throws: KeyError.self) { try verifier.reloadKeys(paths: ["/nonexistent/keys"]) }
        #expect(await verifier.verify(token).status == .validToken)
    }

    // MARK: The trust boundary is in the types

    @Test func decodedTokensAndVerdictsAreReadOnly() {
        // The probe of the issue set `token`/`status`/`verified` and re-verified;
        // every property is now read-only (a writable key path would allow it).
        let tokenPaths: [PartialKeyPath<DecodedToken>] = [\.token, \.fields, \.xml, \.frame, \.transport, \.envelope, \.mediaRSS, \.warnings]
        for path in tokenPaths { #expect(!(path is AnyKeyPath & WritableKeyPathMarker), "\(path)") }
        let verdictPaths: [PartialKeyPath<Verdict>] = [\.status, \.reason, \.token, \.formatError, \.verified, \.key, \.checksRun, \.checksSkipped]
        for path in verdictPaths { #expect(!(path is AnyKeyPath & WritableKeyPathMarker), "\(path)") }
        let proofPaths: [PartialKeyPath<VerifiedToken>] = [\.decoded, \.key]
        for path in proofPaths { #expect(!(path is AnyKeyPath & WritableKeyPathMarker), "\(path)") }
    }

    @Test func aValidVerdictCarriesTheProofOfTheSignedBytes() {
        let verdict = Minting.verifier().verify(Minting.token())
        let proof = try! #require(verdict.verified)
        #expect(proof.decoded.signedBytes.elementsEqual(verdict.token!.signedBytes))
        #expect(proof.key != nil)
        let refused = Minting.verifier { $0.requestorID = "CNN" }.verify(Minting.token())
        #expect(refused.verified == nil)
    }

    // MARK: Logs and storage

    @Test func verdictsAndProofsDescribeThemselves() throws {
        let verdict = Minting.verifier().verify(Minting.token())
        let proof = "\(verdict.verified!)"
        for part in [
            "media token", "<authToken>", "requestor 'TNT'", "resource 'TNT'", "mvpd 'Comcast_SSO'", "expires 2016-03-17T22:08:31Z", "verified by",
        ] {
            #expect(proof.contains(part), "\(proof)")
        }
        #expect("\(verdict)".hasPrefix("VALID_TOKEN: every configured check passed"))
        let hostile = Minting.verifier { $0.requestorID = "X" }.verify(
            Minting.token(
                {
                    var r = Minting.request()
                    r.requestorID = "A"
                    return r
                }()
            )
        )
        #expect("\(hostile)".hasPrefix("INVALID_REQUESTOR_ID: "))
        let encoded = try JSONEncoder().encode(verdict)
        let object = try #require(JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(object["status"] as? String == "VALID_TOKEN")
        #expect(object["kind"] as? String == "media")
        let error = Minting.verifier().verify("garbage").formatError!
        #expect(try JSONDecoder().decode(TokenError.self, from: JSONEncoder().encode(error)) == error)
        for decision in [ReplayDecision.accepted, .replayed, .unavailable("down")] {
            #expect(try JSONDecoder().decode(ReplayDecision.self, from: JSONEncoder().encode(decision)) == decision)
        }
    }

    @Test func errorCodesCanGrowWithoutBreakingCallers() throws {
        let codes = TokenError.Code.allCases.map(\.rawValue)
        #expect(Set(codes).count == codes.count)
        #expect(Set(KeyError.Code.allCases.map(\.rawValue)).count == KeyError.Code.allCases.count)
        // A code as a plain JSON string, and one from a newer library still decodes.
        #expect(String(decoding: try JSONEncoder().encode(TokenError.Code.emptyInput), as: UTF8.self) == #""emptyInput""#)
        let future = try JSONDecoder().decode(TokenError.Code.self, from: Data(#""someFutureCode""#.utf8))
        #expect(future.rawValue == "someFutureCode")
        // A caller's switch names the codes it knows and has a default.
        func advice(_ code: TokenError.Code) -> String {
            switch code {
            case .invalidBase64, .unencodedPlus: "re-copy the token"
            case .missingField: "the issuer left out a field"
            default: "see the reason"
            }
        }
        #expect(advice(.unencodedPlus) == "re-copy the token")
        #expect(advice(future) == "see the reason")
    }

    // MARK: Captured text

    @Test func aRESTDocumentWithOneTokenVerifiesAsThatToken() {
        let token = Minting.token()
        let v1 = "{\"serializedToken\": \"\(Fixtures.base64(token))\", \"expires\": \"1458252511000\"}"
        let verdict = Minting.verifier().verify(v1)
        #expect(verdict.status == .validToken)
        #expect(verdict.token?.envelope != nil)
        let two =
            "{\"decisions\": [{\"token\": {\"serializedToken\": \"\(Fixtures.base64(token))\"}}, {\"token\": {\"serializedToken\": \"\(Fixtures.base64(token))\"}}]}"
        let several = Minting.verifier().verify(two)
        #expect(several.status == .invalidTokenFormat)
        #expect(several.formatError?.code == .severalTokens)
        #expect(several.reason.contains("VerificationStream"))
    }
}

/// Matches only writable key paths (`WritableKeyPath` and its subclasses).
private protocol WritableKeyPathMarker {}
extension WritableKeyPath: WritableKeyPathMarker {}

/// A flag set once, read from any task.
private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}

/// Suspends waiters until opened (also those that arrive after).
final class Gate: Sendable {
    private struct State {
        var open = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
