import Foundation
import Testing

@testable import GateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// docs/DESIGN.md#limits-deadlines-and-revocation, against the built `tokengate`
/// executable: a deadline for the whole request, a cap on connections in all
/// and per peer, and one budget for bodies in flight. Clients here are raw
/// sockets, so that they can misbehave byte by byte.
@Suite(.serialized, .enabled(if: GateProcess.binary != nil, "the tokengate executable is not built"))
struct RequestLimitTests {
    /// A raw connection from `address` (any of 127.0.0.0/8).
    final class Client {
        let socket: Int32

        init(port: Int, from address: String = "127.0.0.1") throws {
            socket = try RawHTTP.connect(port: port, from: address)
        }

        deinit { close(socket) }

        /// Sends what it can; false once the peer has closed.
        @discardableResult
        func send(_ text: String) -> Bool { send(Array(text.utf8)) }

        @discardableResult
        func send(_ bytes: [UInt8]) -> Bool {
            var sent = 0
            while sent < bytes.count {
                let written = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { return false }
                sent += written
            }
            return true
        }

        /// What arrives within `seconds`, until the peer closes; `closed` says whether it did.
        func receive(within seconds: Double) -> (text: String, closed: Bool) {
            var received: [UInt8] = []
            let deadline = Date().addingTimeInterval(seconds)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while Date() < deadline {
                var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                let left = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
                guard poll(&poller, 1, left) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return (String(decoding: received, as: UTF8.self), true) }
                received += buffer[..<count]
            }
            return (String(decoding: received, as: UTF8.self), false)
        }

        /// Starts a POST with a 1000-byte body and sends one byte of it every
        /// `seconds` until the peer closes (at most 4 s): what came back, and whether it closed.
        func trickleABodyUntilClosed(every seconds: Double) -> (text: String, closed: Bool) {
            send("POST /v1/verify HTTP/1.1\r\nHost: gate\r\nContent-Length: 1000\r\n\r\nabc")
            let start = Date()
            var answer = (text: "", closed: false)
            while !answer.closed, Date().timeIntervalSince(start) < 4 {
                _ = send("d")
                let part = receive(within: seconds)
                answer = (answer.text + part.text, part.closed)
            }
            return answer
        }
    }

    @Test func aHeadStillIncompleteAtTheDeadlineIsClosedWithNoAnswer() async throws {
        let gate = try GateProcess(["--request-timeout", "1"])
        try await offloaded {
            let client = try Client(port: gate.port)
            client.send("GET /healthz HTTP/1.1\r\nHost: gate\r\n")
            let start = Date()
            var closed = false
            // One byte every 300 ms: the idle timeout alone would never fire.
            while !closed, Date().timeIntervalSince(start) < 4 {
                _ = client.send("X")
                let answer = client.receive(within: 0.3)
                #expect(answer.text.isEmpty, "an incomplete head got an answer: \(answer.text)")
                closed = answer.closed
            }
            #expect(closed, "a trickled head kept its connection past the 1 s deadline")
            #expect(Date().timeIntervalSince(start) < 2.5)
        }
        #expect(ScrapedMetrics(port: gate.port)?["tokengate_request_timeouts_total"] == 1)
    }

    @Test func aBodyStillIncompleteAtTheDeadlineGets408() async throws {
        let gate = try GateProcess(["--request-timeout", "1"])
        try await offloaded {
            let client = try Client(port: gate.port)
            let answer = client.trickleABodyUntilClosed(every: 0.3)
            #expect(answer.text.hasPrefix("HTTP/1.1 408"), "\(answer.text.prefix(80))")
            #expect(answer.text.lowercased().contains("connection: close"))
            #expect(answer.closed)
            // A well-behaved request on a new connection is still answered.
            #expect(try RawHTTP.get(port: gate.port, "/healthz").status == 200)
        }
    }

    /// The connection's one timer rolls forward: it fires at the first
    /// request's deadline, finds a later request in flight and waits for that
    /// one's. A request begun 0.6 s into the connection gets its whole second.
    @Test func eachRequestOnAKeptAliveConnectionGetsItsOwnWholeDeadline() async throws {
        let gate = try GateProcess(["--request-timeout", "1"])
        try await offloaded {
            func healthz(_ client: Client) {
                client.send("GET /healthz HTTP/1.1\r\nHost: gate\r\n\r\n")
                var answer = ""
                let asked = Date()
                while !answer.contains("\r\n\r\n"), Date().timeIntervalSince(asked) < 2 { answer += client.receive(within: 0.1).text }
                #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(80))")
            }
            // Complete requests over more than the deadline: each answered, the connection kept.
            let steady = try Client(port: gate.port)
            for _ in 0..<5 {
                healthz(steady)
                Thread.sleep(forTimeInterval: 0.3)
            }
            // A request still in flight when the timer set by the one before it fires.
            let client = try Client(port: gate.port)
            healthz(client)
            Thread.sleep(forTimeInterval: 0.6)
            let start = Date()
            let answer = client.trickleABodyUntilClosed(every: 0.1)
            let took = Date().timeIntervalSince(start)
            #expect(answer.text.hasPrefix("HTTP/1.1 408"), "\(answer.text.prefix(80))")
            #expect(took >= 0.9, "the last request was cut after \(took) s, not its own 1 s")
            #expect(took < 2.5)
        }
        #expect(ScrapedMetrics(port: gate.port)?["tokengate_request_timeouts_total"] == 1)
    }

    @Test func bodiesInFlightShareOneBudget() async throws {
        let gate = try GateProcess(["--max-body-bytes-in-flight", "1048576"])
        try await offloaded {
            let holder = try Client(port: gate.port)
            holder.send("POST /v1/verify HTTP/1.1\r\nHost: gate\r\nContent-Length: 1048576\r\n\r\nabc")
            Thread.sleep(forTimeInterval: 0.2)
            let refused = try Client(port: gate.port)
            refused.send("POST /v1/verify HTTP/1.1\r\nHost: gate\r\nContent-Length: 10\r\n\r\n")
            let answer = refused.receive(within: 3)
            #expect(answer.text.hasPrefix("HTTP/1.1 503"), "\(answer.text.prefix(80))")
            #expect(answer.text.lowercased().contains("retry-after: 1"))
            // A request with no body needs no budget.
            #expect(try RawHTTP.get(port: gate.port, "/healthz").status == 200)
        }
    }

    /// Every step waits for the gate to have taken the previous one in: the
    /// start-up probe's connection is released only once its client has
    /// closed too, and connections accepted together are admitted on two
    /// event loops in either order, so each connection is confirmed by an
    /// answer before the next one that depends on it opens.
    @Test func pastTheCapNewConnectionsWaitAndOnePeerCannotTakeAll() async throws {
        let gate = try GateProcess(["--max-connections", "5", "--max-connections-per-peer", "3"])
        try await offloaded {
            /// One whole answer on a kept-alive connection: the head, then the body its Content-Length announces.
            func served(_ client: Client, _ target: String = "/healthz") -> String {
                client.send("GET \(target) HTTP/1.1\r\nHost: gate\r\n\r\n")
                var answer = ""
                let asked = Date()
                func complete() -> Bool {
                    guard let end = answer.range(of: "\r\n\r\n") else { return false }
                    let length =
                        answer[..<end.lowerBound].lowercased().components(separatedBy: "\r\n")
                        .first { $0.hasPrefix("content-length:") }.flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                    return answer[end.upperBound...].utf8.count >= length
                }
                while !complete(), Date().timeIntervalSince(asked) < 3 { answer += client.receive(within: 0.1).text }
                return answer
            }
            // A kept-alive connection that watches the count until it is the only one (the probe has gone).
            let watcher = try Client(port: gate.port, from: "127.0.0.4")
            let settled = Date()
            while Date().timeIntervalSince(settled) < 10,
                !served(watcher, "/metrics").contains("\ntokengate_connections_open 1.0\n")
            { Thread.sleep(forTimeInterval: 0.05) }
            // One peer: three connections, each answered; its fourth is closed at once.
            var own = try (0..<3).map { _ in try Client(port: gate.port) }
            for client in own { #expect(served(client).hasPrefix("HTTP/1.1 200")) }
            let fourth = try Client(port: gate.port)
            fourth.send("GET /healthz HTTP/1.1\r\nHost: gate\r\n\r\n")
            let refused = fourth.receive(within: 2)
            #expect(refused.closed && refused.text.isEmpty, "a peer over its share was served: \(refused.text.prefix(40))")
            // Another peer takes the last place; the next one waits in the backlog.
            let other = try Client(port: gate.port, from: "127.0.0.2")
            #expect(served(other).hasPrefix("HTTP/1.1 200"))
            let waiting = try Client(port: gate.port, from: "127.0.0.3")
            waiting.send("GET /healthz HTTP/1.1\r\nHost: gate\r\n\r\n")
            #expect(waiting.receive(within: 1).text.isEmpty, "a connection past the cap was served")
            // One closes: the waiting one is accepted and answered.
            own.removeFirst()
            #expect(waiting.receive(within: 3).text.hasPrefix("HTTP/1.1 200"), "the waiting connection was not served once a place freed")
            #expect(own.count == 2)
            withExtendedLifetime((watcher, other)) {}
        }
        #expect((ScrapedMetrics(port: gate.port)?[#"tokengate_connections_refused_total{reason="per-peer"}"#] ?? 0) >= 1)
        #expect((ScrapedMetrics(port: gate.port)?[#"tokengate_connections_refused_total{reason="accept-paused"}"#] ?? 0) >= 1)
    }

    /// 1,000 clients announce nearly a MiB of body each and trickle it; the
    /// gate's peak memory stays flat and other requests are answered on time.
    @Test func aThousandTricklingClientsDoNotHoldMemoryOrDelayOthers() async throws {
        let gate = try GateProcess(["--request-timeout", "3"])
        let pid = gate.process.processIdentifier
        func status(_ field: String) -> Int {
            let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
        }
        _ = try RawHTTP.get(port: gate.port, "/healthz")
        let baseline = status("VmRSS")
        let result = try await offloaded { () -> (slowest: Double, clients: Int) in
            let chunk = [UInt8](repeating: UInt8(ascii: "A"), count: 256 * 1024)
            var clients: [Client] = []
            for index in 0..<1000 {
                guard let client = try? Client(port: gate.port, from: "127.0.1.\(index % 250 + 1)") else { continue }
                var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
                setsockopt(client.socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                client.send("POST /v1/verify HTTP/1.1\r\nHost: gate\r\nContent-Length: 1048575\r\n\r\n")
                client.send(chunk)
                clients.append(client)
            }
            var slowest = 0.0
            let start = Date()
            while Date().timeIntervalSince(start) < 4 {
                for client in clients { _ = Glibc.send(client.socket, "x", 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                let probe = Date()
                let answer = try RawHTTP.get(port: gate.port, "/healthz")
                #expect(answer.status == 200)
                slowest = max(slowest, Date().timeIntervalSince(probe))
                Thread.sleep(forTimeInterval: 0.25)
            }
            return (slowest, clients.count)
        }
        let peak = status("VmHWM")
        print(
            "trickling clients: \(result.clients), gate RSS before \(baseline / 1024) MiB, peak \(peak / 1024) MiB, slowest probe \(Int(result.slowest * 1000)) ms"
        )
        #expect(result.clients >= 900)
        #expect(peak - baseline < 64 * 1024, "the gate's peak RSS grew by \((peak - baseline) / 1024) MiB under trickling clients")
        #expect(result.slowest < 1.0, "a request waited \(result.slowest) s behind the trickling clients")
        #expect((ScrapedMetrics(port: gate.port)?["tokengate_connections_open"] ?? 1000) < 10, "trickling connections outlived the deadline")
    }
}
