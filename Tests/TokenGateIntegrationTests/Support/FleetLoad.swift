import EntitlementTokens
import Foundation
import Synchronization

@testable import GateTestSupport

/// The load of the fleet tests and of `Benchmarks/fleet`: distinct media
/// tokens, each sent several times at once in mixed transport forms, spread
/// over several gates, counted by answer.
enum FleetLoad {
    /// The transport forms a proxy passes in a query: the raw XML form and
    /// Base64 percent-encoded, Base64url as it is. All three have the same
    /// replay id (the SHA-256 of the signed bytes).
    static let formNames = ["raw percent-encoded", "Base64", "Base64url"]

    /// `count` media tokens issued now, each in the three forms of ``formNames``;
    /// signed on `threads` threads (RSA-2048 signing is most of the cost).
    static func mintMediaTokens(_ count: Int, threads: Int = 2) throws -> [[String]] {
        let minted = Mutex([[String]](repeating: [], count: count))
        let failure = Mutex<(any Error)?>(nil)
        runOnThreads(threads) { thread in
            for index in stride(from: thread, to: count, by: threads) {
                do {
                    let forms = try mediaTokenForms()
                    minted.withLock { $0[index] = forms }
                } catch {
                    failure.withLock { $0 = error }
                    return
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        let tokens = minted.withLock { $0 }
        // The counts the fleet tests assert assume one token per index: two
        // equal tokens would be one token sent twice (a replay), not two.
        guard Set(tokens.map { $0.first ?? "" }).count == count else { throw DuplicateTokens() }
        return tokens
    }

    struct DuplicateTokens: Error, CustomStringConvertible {
        var description: String { "two of the minted media tokens are the same token" }
    }

    static func mediaTokenForms() throws -> [String] {
        var request = GateFixtures.request(.media)
        request.issueTime = TokenTimestamp.now()
        request.encoding = .raw
        let raw = try TokenMinter.mint(request, key: GateFixtures.signingKey)
        let base64 = Data(raw.utf8).base64EncodedString()
        let base64url = base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return [percentEncoded(raw), percentEncoded(base64), base64url]
    }

    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet()
        allowed.insert(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed)!
    }

    /// Answers by "status X-Token-Status" ("200 VALID_TOKEN", "403 TOKEN_REPLAYED"…),
    /// and requests that got no answer.
    struct Tally: CustomStringConvertible {
        var answers: [String: Int] = [:]
        var failures = 0
        var firstFailure: String?

        subscript(_ key: String) -> Int { answers[key] ?? 0 }
        var total: Int { answers.values.reduce(0, +) + failures }
        var description: String {
            answers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
                + (failures == 0 ? "" : ", no answer: \(failures) (\(firstFailure ?? ""))")
        }

        mutating func merge(_ other: Tally) {
            answers.merge(other.answers, uniquingKeysWith: +)
            failures += other.failures
            firstFailure = firstFailure ?? other.firstFailure
        }
    }

    /// Sends every token `sends` times to `/v1/auth-request` (the token in
    /// `X-Original-URI`): send `j` of token `i` goes to gate `(i + j) % ports.count`
    /// in form `j % 3`. Requests are taken in token order by `workers`
    /// threads, each with a keep-alive connection to every gate, so the
    /// sends of one token are in flight together on different gates.
    static func send(_ tokens: [[String]], sends: Int, ports: [Int], workers: Int = 16) -> Tally {
        let next = Atomic<Int>(0)
        let total = tokens.count * sends
        let tallies = Mutex([Tally]())
        runOnThreads(workers) { _ in
            let clients = ports.map { KeepAliveHTTP(port: $0) }
            var tally = Tally()
            while true {
                let item = next.add(1, ordering: .relaxed).oldValue
                guard item < total else { break }
                let (token, send) = item.quotientAndRemainder(dividingBy: sends)
                let form = tokens[token][send % tokens[token].count]
                do {
                    let answer = try clients[(token + send) % ports.count]
                        .get("/v1/auth-request", headers: [("X-Original-URI", "/live/tnt.m3u8?token=\(form)")])
                    tally.answers["\(answer.status) \(answer.tokenStatus ?? "-")", default: 0] += 1
                } catch {
                    tally.failures += 1
                    tally.firstFailure = tally.firstFailure ?? "\(error)"
                }
            }
            tallies.withLock { $0.append(tally) }
        }
        return tallies.withLock { $0.reduce(into: Tally()) { $0.merge($1) } }
    }

    /// Runs `body(index)` on `count` threads of their own and waits for all.
    static func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread {
                body(index)
                group.leave()
            }.start()
        }
        group.wait()
    }
}
