import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// Issue 20 item 6 (docs/DESIGN.md#the-web-debugger): the debugger answers only its own
/// name. On `/debugger` and below (and the standalone server's `/` redirect),
/// any `Host` but `localhost`, `127.0.0.1`, `[::1]` or the listen host — with
/// no port or the listen port, any case — gets 421 with no body, as does a
/// request with no `Host` or two; the gate's own routes never look at `Host`.
/// Over a real socket (`.live`), so the `Host` lines are exactly the ones sent.
@Suite struct DebuggerHostTests {
    let clock = GateFixtures.Clock()

    struct Answer {
        var status: Int
        var body: String
    }

    /// One request with exactly these `Host` lines (none, one or two).
    static func send(port: Int, _ target: String, method: String = "GET", hosts: [String], body: String = "") async throws -> Answer {
        var request = "\(method) \(target) HTTP/1.1\r\n"
        for host in hosts { request += "Host: \(host)\r\n" }
        request += "Connection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        let bytes = Array(request.utf8)
        let raw = try await offloaded { try RawHTTP.exchange(port: port, bytes) }
        let text = String(decoding: raw, as: UTF8.self)
        let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return Answer(status: status, body: body)
    }

    static func refused(port: Int, listenPort: Int) -> [[String]] {
        [
            ["evil.example"], ["evil.example:\(listenPort)"], ["127.0.0.1.evil.example"], ["127.0.0.1.evil.example:\(listenPort)"],
            ["localhost.evil.example"], ["127.0.0.1:\(listenPort + 1)"], ["localhost:0"], ["[::1]:\(listenPort + 1)"],
            ["localhost:"], ["localhost:+\(listenPort)"], ["[::1"], ["localhost", "localhost"], ["localhost", "evil.example"], [],
        ]
    }

    static func accepted(listenPort: Int) -> [[String]] {
        [
            ["localhost"], ["LOCALHOST"], ["127.0.0.1"], ["[::1]"], ["127.0.0.1:\(listenPort)"], ["[::1]:\(listenPort)"],
            ["Localhost:\(listenPort)"],
        ]
    }

    static let debuggerRoutes = [
        ("GET", "/debugger"), ("GET", "/debugger/debugger.js"), ("GET", "/debugger/csp-reports"),
        ("GET", "/debugger/nothing-here"), ("POST", "/debugger/report"), ("POST", "/debugger/har"),
    ]

    func checkDebugger(port: Int, listenPort: Int, routes: [(String, String)], token: String) async throws {
        for hosts in Self.refused(port: port, listenPort: listenPort) {
            for (method, path) in routes {
                let answer = try await Self.send(port: port, path, method: method, hosts: hosts, body: method == "POST" ? token : "")
                #expect(answer.status == 421, "\(method) \(path) Host \(hosts)")
                #expect(answer.body.isEmpty, "\(method) \(path) Host \(hosts): \(answer.body)")
            }
        }
        for hosts in Self.accepted(listenPort: listenPort) {
            let page = try await Self.send(port: port, "/debugger", hosts: hosts)
            #expect(page.status == 200, "Host \(hosts)")
            let report = try await Self.send(port: port, "/debugger/report", method: "POST", hosts: hosts, body: token)
            #expect(report.status == 200, "Host \(hosts)")
            #expect(report.body.contains("VALID_TOKEN"), "Host \(hosts)")
        }
    }

    @Test func theStandaloneDebuggerAnswersOnlyItsOwnNames() async throws {
        let options = try DebuggerOptions.parse(["--key", GateFixtures.publicKey])
        let server = try DebuggerServer(configuration: DebuggerConfiguration(options), logger: LogCapture().logger, clock: { clock.read() })
        let token = GateFixtures.token()
        try await server.application().test(.live) { client in
            // .live binds any free port: the names take the port actually bound.
            let port = try #require(client.port)
            try await checkDebugger(port: port, listenPort: port, routes: Self.debuggerRoutes + [("GET", "/")], token: token)
            let redirect = try await Self.send(port: port, "/", hosts: ["127.0.0.1:\(port)"])
            #expect(redirect.status == 303)
            // Health is not the debugger's page: a probe may use any name.
            let answer = try await Self.send(port: port, "/healthz", hosts: ["evil.example"])
            #expect(answer.status == 200)
        }
    }

    @Test func serveDebuggerAnswersOnlyItsOwnNamesAndTheGateAnyName() async throws {
        let runtime = try GateFixtures.runtime(["--debugger", "--listen", "127.0.0.1:8095"], clock: clock)
        let token = GateFixtures.token()
        try await runtime.application().test(.live) { client in
            let port = try #require(client.port)
            try await checkDebugger(port: port, listenPort: 8095, routes: Self.debuggerRoutes, token: token)
            // The gate's own routes never look at Host: nginx sends its upstream's name.
            for hosts in [["evil.example"], ["evil.example:8090"], []] {
                let verified = try await Self.send(port: port, "/v1/verify", method: "POST", hosts: hosts, body: token)
                #expect(verified.status == 200, "Host \(hosts)")
                #expect(verified.body.contains("VALID_TOKEN"), "Host \(hosts)")
                let answer = try await Self.send(port: port, "/healthz", hosts: hosts)
                #expect(answer.status == 200, "Host \(hosts)")
            }
        }
    }

    @Test func allowedHostsOnlyBehindTheInsecureDoor() async throws {
        let base = ["--key", GateFixtures.publicKey, "--listen", "0.0.0.0:8090"]
        #expect(throws: GateConfigurationError.self) {
            try DebuggerConfiguration(DebuggerOptions.parse(["--key", GateFixtures.publicKey, "--allowed-host", "box.example"]))
        }
        for bad in ["box.example:8090", "http://box.example", "-box.example", "box..example", "", "box example", "b\u{FEFF}x"] {
            // Refused by the parser (an empty value) or the configuration, never taken.
            let options = try? DebuggerOptions.parse(base + ["--insecure-listen-anywhere", "--allowed-host=\(bad)"])
            #expect(options.flatMap { try? DebuggerConfiguration($0) } == nil, "\(bad)")
        }
        let options = try DebuggerOptions.parse(
            base + [
                "--insecure-listen-anywhere", "--allowed-host", "Debugger.Support.example",
                "--allowed-host", "10.1.2.3",
            ]
        )
        let server = try DebuggerServer(configuration: DebuggerConfiguration(options), logger: LogCapture().logger, clock: { clock.read() })
        try await server.application().test(.live) { client in
            let port = try #require(client.port)
            for hosts in [["debugger.support.example"], ["DEBUGGER.support.example:\(port)"], ["10.1.2.3"], ["0.0.0.0:\(port)"], ["localhost"]] {
                let answer = try await Self.send(port: port, "/debugger", hosts: hosts)
                #expect(answer.status == 200, "Host \(hosts)")
            }
            for hosts in [["evil.example"], ["debugger.support.example.evil.example"], ["debugger.support.example:1"]] {
                let answer = try await Self.send(port: port, "/debugger", hosts: hosts)
                #expect(answer.status == 421, "Host \(hosts)")
            }
        }
    }

    @Test func helpSaysWhichNamesItAnswers() {
        let help = Debugger.helpMessage(columns: 200)
        for text in ["--allowed-host", "421", "DNS rebinding", "localhost, 127.0.0.1, [::1]"] {
            #expect(help.contains(text), "debugger --help lacks \(text)")
        }
    }

    /// In process (`.router`), the test client names `localhost` as the
    /// request's authority; a second `Host` is two names, refused.
    @Test func inProcessRequestsNameLocalhost() async throws {
        let runtime = try GateFixtures.runtime(["--debugger"], clock: clock)
        try await runtime.application().test(.router) { client in
            let page = try await client.executeRequest(uri: "/debugger", method: .get, headers: [:], body: nil)
            #expect(page.status == .ok)
            let twice = try await client.executeRequest(uri: "/debugger", method: .get, headers: [HTTPField.Name("Host")!: "evil.example"], body: nil)
            #expect(twice.status == .misdirectedRequest)
            #expect(twice.body.readableBytes == 0)
            let verified = try await client.executeRequest(
                uri: "/v1/verify",
                method: .post,
                headers: [HTTPField.Name("Host")!: "evil.example"],
                body: ByteBuffer(string: GateFixtures.token())
            )
            #expect(verified.status == .ok)
        }
    }
}
