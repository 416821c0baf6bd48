import Foundation
import Synchronization

@testable import GateTestSupport

/// Players arriving at a fixed rate through the shipped nginx site, for the
/// rolling-restart test: player `i` starts at `i / playersPerSecond` seconds
/// and opens playback on its own fresh media token (200 VALID_TOKEN, with a
/// session), plays a segment on that session (200 VALID_SESSION), then sends
/// the spent token again (403 TOKEN_REPLAYED), each request on a connection
/// of its own, as players behind different addresses would. Every other
/// answer, and every request that got none, is kept with when it came.
final class SteadyPlayers: Sendable {
    /// What the players saw.
    struct Tally: CustomStringConvertible {
        var players = 0
        var requests = 0
        /// "fresh 200 VALID_TOKEN", "segment 200 VALID_SESSION", "replay 403 TOKEN_REPLAYED", and anything else.
        var answers: [String: Int] = [:]
        /// Each answer other than the expected one, or failure, with its time since the load began.
        var unexpected: [String] = []
        /// Tokens allowed (200) on both of their sends.
        var allowedTwice = 0
        /// Players that could not start on time (every worker busy): the rate was not held.
        var late = 0

        var description: String {
            "\(players) players, \(requests) requests: "
                + answers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
                + (late == 0 ? "" : "; \(late) players started over 0.5 s late")
        }

        mutating func merge(_ other: Tally) {
            players += other.players
            requests += other.requests
            answers.merge(other.answers, uniquingKeysWith: +)
            unexpected += other.unexpected
            allowedTwice += other.allowedTwice
            late += other.late
        }
    }

    let port: Int
    let tokens: [String]
    let playersPerSecond: Double
    let started = Date()
    private let next = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let tallies = Mutex([Tally]())
    private let done = DispatchGroup()

    /// Starts `workers` threads playing `tokens` (one each, in order) against
    /// the site on `port`; they run until ``stop()`` or the tokens run out.
    init(port: Int, tokens: [String], playersPerSecond: Double, workers: Int = 6) {
        self.port = port
        self.tokens = tokens
        self.playersPerSecond = playersPerSecond
        for _ in 0..<workers {
            done.enter()
            Thread { [self] in
                tallies.withLock { $0.append(play()) }
                done.leave()
            }.start()
        }
    }

    /// Seconds since the load began.
    var elapsed: Double { Date().timeIntervalSince(started) }

    /// Lets the players already started finish, and says what they all saw.
    func stop() -> Tally {
        stopping.store(true, ordering: .relaxed)
        done.wait()
        return tallies.withLock { $0.reduce(into: Tally()) { $0.merge($1) } }
    }

    /// Whether the tokens ran out before ``stop()`` (the test minted too few for its timeline).
    var ranOut: Bool { next.load(ordering: .relaxed) >= tokens.count }

    private func play() -> Tally {
        var tally = Tally()
        while !stopping.load(ordering: .relaxed) {
            let player = next.add(1, ordering: .relaxed).oldValue
            guard player < tokens.count else { break }
            let due = Double(player) / playersPerSecond
            let wait = due - elapsed
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) } else if wait < -0.5 { tally.late += 1 }
            tally.players += 1
            let token = tokens[player]
            func send(
                _ step: String,
                _ target: String,
                headers: [(String, String)] = [],
                expecting expected: (Int, String)
            ) -> RawHTTP.Answer? {
                tally.requests += 1
                let at = elapsed
                do {
                    let answer = try RawHTTP.get(port: port, target, headers: headers)
                    let seen = "\(answer.status) \(answer.tokenStatus ?? "-")"
                    tally.answers["\(step) \(seen)", default: 0] += 1
                    if (answer.status, answer.tokenStatus ?? "-") != expected {
                        tally.unexpected.append(String(format: "%.2f s: player %d %@: %@", at, player, step, seen))
                    }
                    return answer
                } catch {
                    tally.answers["\(step) no answer", default: 0] += 1
                    tally.unexpected.append(String(format: "%.2f s: player %d %@: no answer (%@)", at, player, step, "\(error)"))
                    return nil
                }
            }
            let fresh = send("fresh", "/hls/tnt/master.m3u8?token=\(token)", expecting: (200, "VALID_TOKEN"))
            if let session = fresh?["X-Token-Session"] {
                _ = send("segment", "/hls/tnt/seg1.ts", headers: [("X-Token-Session", session)], expecting: (200, "VALID_SESSION"))
            }
            let replay = send("replay", "/hls/tnt/master.m3u8?token=\(token)", expecting: (403, "TOKEN_REPLAYED"))
            if fresh?.status == 200, replay?.status == 200 { tally.allowedTwice += 1 }
        }
        return tally
    }
}
