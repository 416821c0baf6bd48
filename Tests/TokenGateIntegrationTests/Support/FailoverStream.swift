import Foundation
import RedisRESP
import Synchronization

@testable import EntitlementTokens
@testable import EntitlementTokensRedis
@testable import GateTestSupport

/// The load of the failover tests: a stream of distinct media tokens, each
/// minted just before it is sent, presented to gate `k` and at once a second
/// time to gate `k + 1`, with every answer and when it came, measured from
/// the stream's start on a monotonic clock. A second thread polls every
/// gate's `/readyz` every 100 ms.
final class FailoverStream: @unchecked Sendable {
    /// One presentation of a token: when it was sent and answered (ms since
    /// the stream started) and "status X-Token-Status", or "no answer: …".
    struct Presentation: Sendable {
        let gate: Int
        let sentAt: Double
        let answeredAt: Double
        let answer: String
    }

    struct Token: Sendable {
        /// The three transport forms (FleetLoad.mediaTokenForms).
        let forms: [String]
        /// The Redis Cluster hash slot of its replay key.
        let slot: Int
        let firstGate: Int
        var presentations: [Presentation]
    }

    struct ReadinessSample: Sendable {
        let gate: Int
        let at: Double
        let status: Int
    }

    static let allowed = "200 VALID_TOKEN"
    static let replayed = "403 TOKEN_REPLAYED"
    static let unavailable = "503 REPLAY_CHECK_UNAVAILABLE"

    let ports: [Int]
    let start = ContinuousClock.now
    private let stopping = Atomic<Bool>(false)
    private let tokens = Mutex<[Token]>([])
    private let samples = Mutex<[ReadinessSample]>([])
    private let replays = Mutex<[(token: Int, presentation: Presentation)]>([])
    private let failure = Mutex<String?>(nil)
    private let done = DispatchGroup()

    init(ports: [Int]) { self.ports = ports }

    /// Milliseconds from the stream's start to now.
    func now() -> Double { Self.milliseconds(ContinuousClock.now - start) }

    static func milliseconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) * 1000 + Double(parts.attoseconds) / 1e15
    }

    /// Starts `workers` sending threads and the readiness poller. Each worker
    /// pauses `pause` after each token; with `rate`, the workers together
    /// send that many fresh tokens a second on a fixed schedule instead. With
    /// `replayAfter`, each worker also presents every token it sent that long
    /// ago once more, to a third gate (``spentReplays()``): a player's replay
    /// of a spent token, which must not be allowed.
    func begin(workers: Int = 4, pause: Duration = .milliseconds(4), rate: Int? = nil, replayAfter: Duration? = nil) {
        let pauseMicroseconds = useconds_t(Self.milliseconds(pause) * 1000)
        let period = rate.map { Double(workers) * 1000 / Double(max(1, $0)) }
        let replayAge = replayAfter.map(Self.milliseconds)
        for worker in 0..<workers {
            done.enter()
            Thread { [self] in
                defer { done.leave() }
                let clients = ports.map { KeepAliveHTTP(port: $0) }
                var sequence = worker
                var due = now()
                /// This worker's tokens waiting for their replay, oldest first.
                var spent: [(index: Int, sentAt: Double)] = []
                while !stopping.load(ordering: .relaxed) {
                    do {
                        let forms = try FleetLoad.mediaTokenForms()
                        let slot = try Self.slot(ofRawForm: forms[0])
                        let first = sequence % ports.count
                        var token = Token(forms: forms, slot: slot, firstGate: first, presentations: [])
                        for copy in 0..<2 {
                            let gate = (first + copy) % ports.count
                            token.presentations.append(present(forms[(sequence + copy) % forms.count], to: gate, over: clients[gate]))
                        }
                        let sentAt = token.presentations[0].sentAt
                        let index = tokens.withLock {
                            $0.append(token)
                            return $0.count - 1
                        }
                        if let replayAge {
                            spent.append((index, sentAt))
                            while let oldest = spent.first, now() - oldest.sentAt >= replayAge {
                                spent.removeFirst()
                                let replayed = tokens.withLock { $0[oldest.index] }
                                let gate = (replayed.firstGate + 2) % ports.count
                                let presentation = present(replayed.forms[2], to: gate, over: clients[gate])
                                replays.withLock { $0.append((oldest.index, presentation)) }
                            }
                        }
                    } catch {
                        failure.withLock { $0 = $0 ?? "minting: \(error)" }
                        return
                    }
                    sequence += workers
                    if let period {
                        due += period
                        let wait = due - now()
                        if wait > 0 { usleep(useconds_t(wait * 1000)) }
                    } else {
                        usleep(pauseMicroseconds)
                    }
                }
            }.start()
        }
        done.enter()
        Thread { [self] in
            defer { done.leave() }
            while !stopping.load(ordering: .relaxed) {
                for (gate, port) in ports.enumerated() {
                    let at = now()
                    let status = (try? RawHTTP.get(port: port, "/readyz").status) ?? 0
                    samples.withLock { $0.append(ReadinessSample(gate: gate, at: at, status: status)) }
                }
                usleep(100_000)
            }
        }.start()
    }

    /// Stops every thread and returns the tokens sent and the readiness samples.
    func end() throws -> (tokens: [Token], readiness: [ReadinessSample]) {
        stopping.store(true, ordering: .relaxed)
        done.wait()
        if let failure = failure.withLock({ $0 }) { throw RawHTTP.Failure(description: failure) }
        return (tokens.withLock { $0 }, samples.withLock { $0 })
    }

    /// Whether a token sent at or after `moment` (ms since the start) has been allowed yet.
    func allowedAny(sentAfter moment: Double) -> Bool {
        tokens.withLock { $0.contains { $0.presentations.contains { $0.sentAt >= moment && $0.answer == Self.allowed } } }
    }

    /// The replays `begin(replayAfter:)` sent: the token's index in what
    /// ``end()`` returned, and the answer.
    func spentReplays() -> [(token: Int, presentation: Presentation)] { replays.withLock { $0 } }

    func present(_ form: String, to gate: Int, over client: KeepAliveHTTP) -> Presentation {
        let sentAt = now()
        let answer: String
        do {
            let reply = try client.get("/v1/auth-request", headers: [("X-Original-URI", "/live/tnt.m3u8?token=\(form)")])
            answer = "\(reply.status) \(reply.tokenStatus ?? "-")"
        } catch {
            answer = "no answer: \(error)"
        }
        return Presentation(gate: gate, sentAt: sentAt, answeredAt: now(), answer: answer)
    }

    /// The replay key the gate writes for this token: the prefix and the
    /// SHA-256 of its signed bytes in Base64url (docs/DESIGN.md#one-time-use-across-a-fleet), as the store computes it.
    static func replayKey(ofRawForm percentEncoded: String) throws -> [UInt8] {
        guard let raw = percentEncoded.removingPercentEncoding else {
            throw RawHTTP.Failure(description: "a minted token that is not percent-encoded")
        }
        let token = try TokenDecoder().decode(raw)
        let identity = ReplayIdentity(sha256Of: token.signedBytes.span)
        return ReplayKey.bytes(prefix: Array(RedisReplayStore.defaultKeyPrefix.utf8), identity: identity)
    }

    /// The Redis Cluster hash slot of that key.
    static func slot(ofRawForm percentEncoded: String) throws -> Int {
        RedisHashSlot.slot(of: try replayKey(ofRawForm: percentEncoded))
    }
}
