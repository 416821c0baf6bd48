import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The auth answers written from the event loop over a real socket
/// (docs/DESIGN.md#answers-written-from-the-event-loop): every auth request
/// is answered there (one with a body gets the answer of the same request
/// without one), counted, and in order with the framework's answers on one
/// connection.
@Suite struct DirectAnswerTests {
    /// Every answer in `raw` (each with its Content-Length body), in order.
    static func answers(_ raw: [UInt8]) throws -> [RawHTTP.Answer] {
        var answers: [RawHTTP.Answer] = []
        var rest = raw[...]
        while let end = rest.firstRange(of: Array("\r\n\r\n".utf8)) {
            let head = Array(rest[..<end.lowerBound])
            let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
            let status = Int(lines[0].split(separator: " ")[1])!
            let fields = lines.dropFirst().map { line in
                let colon = line.firstIndex(of: ":")!
                return (name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            let length = Int(fields.first { $0.name.lowercased() == "content-length" }?.value ?? "0")!
            let body = rest[end.upperBound...].prefix(length)
            answers.append(RawHTTP.Answer(status: status, headers: fields, body: String(decoding: body, as: UTF8.self), rawHead: head))
            rest = rest[(end.upperBound + length)...]
        }
        guard rest.isEmpty else { throw RawHTTP.Failure(description: "\(rest.count) bytes after the last answer") }
        return answers
    }

    static func request(_ fields: [(String, String)], body: String = "", close: Bool = false) -> String {
        var text = "GET /v1/auth-request HTTP/1.1\r\nHost: gate\r\n"
        for (name, value) in fields { text += "\(name): \(value)\r\n" }
        if !body.isEmpty { text += "Content-Length: \(body.utf8.count)\r\n" }
        if close { text += "Connection: close\r\n" }
        return text + "\r\n" + body
    }

    func withGate(_ body: @Sendable (_ port: Int, _ session: String) async throws -> Void) async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = GateFixtures.sessionSecret(in: directory)
        let runtime = try GateFixtures.runtime(["--session-secret", secret])
        try await runtime.application(port: 0).test(.live) { client in
            let port = try #require(client.port)
            let opened = try await RawHTTP.fetch(
                port: port,
                "/v1/auth-request",
                headers: [
                    ("X-Original-URI", "/hls/tnt/master.m3u8?token=\(GateFixtures.token())"), ("X-Token-Resource", "TNT"),
                ]
            )
            try await body(port, try #require(opened["X-Token-Session"]))
        }
    }

    /// Each answer both ways: `direct` the request as a proxy sends it,
    /// `framework` the same with a one-byte body (which took the framework's
    /// way before every auth request was answered on the loop). Fields named
    /// in `differing` (a new session's credential) must be there both ways, with any value.
    static func compare(
        port: Int,
        status: String,
        direct: [(String, String)],
        framework: [(String, String)],
        differing: Set<String> = []
    ) async throws {
        let directAnswers = try answers(try await offloaded { try RawHTTP.exchange(port: port, Array(request(direct, close: true).utf8)) })
        let frameworkAnswers = try answers(
            try await offloaded {
                try RawHTTP.exchange(port: port, Array(request(framework, body: "x", close: true).utf8))
            }
        )
        #expect(directAnswers.count == 1 && frameworkAnswers.count == 1)
        guard let direct = directAnswers.first, let framework = frameworkAnswers.first else { return }
        #expect(direct.tokenStatus == status)
        #expect(direct.status == framework.status)
        let ignored = differing.union(["date"])
        let fields = { (answer: RawHTTP.Answer) in
            answer.headers.map { ignored.contains($0.name.lowercased()) ? $0.name : "\($0.name): \($0.value)" }
        }
        #expect(fields(direct) == fields(framework), "\(status)")
        #expect(direct["Date"]?.hasSuffix(" GMT") == true && direct["Date"]?.count == framework["Date"]?.count, "\(direct["Date"] ?? "-")")
    }

    @Test func everyAuthRequestIsAnsweredOnTheLoopWithABodyOrWithoutAndIsCounted() async throws {
        try await withGate { port, session in
            let segment = [("X-Original-URI", "/hls/tnt/seg1.ts"), ("X-Token-Resource", "TNT")]
            let cases: [(status: String, fields: [(String, String)])] = [
                ("VALID_SESSION", segment + [("Cookie", "tokengate_session=\(session)")]),
                ("VALID_SESSION", segment + [("X-Token-Session", session)]),
                ("INVALID_SESSION", segment + [("Cookie", "tokengate_session=not-a-session")]),
                ("NO_TOKEN", segment),
                ("NO_EXPECTED_RESOURCE", [("X-Original-URI", "/hls/tnt/seg1.ts")]),
                ("BAD_REQUEST", [("X-Original-URI", "/hls/tnt/seg1.ts?tgs=a&tgs=b"), ("X-Token-Resource", "TNT")]),
                ("INVALID_TOKEN_FORMAT", [("X-Original-URI", "/hls/tnt/master.m3u8?token=bm90LWEtdG9rZW4"), ("X-Token-Resource", "TNT")]),
                ("INVALID_RESOURCE_ID", [("X-Original-URI", "/hls/tnt/master.m3u8?token=\(GateFixtures.token())"), ("X-Token-Resource", "CNN")]),
            ]
            for (status, fields) in cases {
                try await Self.compare(port: port, status: status, direct: fields, framework: fields)
            }
            // Media tokens, verified and spent: a new one each way, then one presented again.
            let media = { [("X-Original-URI", "/hls/tnt/master.m3u8?token=\(GateFixtures.token())"), ("X-Token-Resource", "TNT")] }
            try await Self.compare(
                port: port,
                status: "VALID_TOKEN",
                direct: media(),
                framework: media(),
                differing: ["x-token-session", "x-token-set-cookie"]
            )
            let spent = media()
            _ = try await RawHTTP.fetch(port: port, "/v1/auth-request", headers: spent)
            try await Self.compare(port: port, status: "TOKEN_REPLAYED", direct: spent, framework: spent)
            let metrics = try await RawHTTP.fetch(port: port, "/metrics").body
            // Each case both ways, the media tokens both ways, the session's opening and the spending.
            let direct = cases.count * 2 + 2 + 2 + 2
            #expect(metrics.contains("\ntokengate_direct_answers_total \(direct)\n"), "one per auth request, with a body or without")
        }
    }

    /// One connection, five requests in one write: the framework's answer to
    /// a probe comes between auth answers, a `HEAD` among them, in the order asked.
    @Test func pipelinedAnswersComeInTheOrderAsked() async throws {
        try await withGate { port, session in
            let segment = [("X-Original-URI", "/hls/tnt/seg1.ts"), ("X-Token-Resource", "TNT"), ("Cookie", "tokengate_session=\(session)")]
            let token = [("X-Original-URI", "/hls/tnt/seg2.ts?token=\(GateFixtures.token())"), ("X-Token-Resource", "TNT")]
            let none = [("X-Original-URI", "/hls/tnt/seg3.ts"), ("X-Token-Resource", "TNT")]
            let probe = "GET /healthz HTTP/1.1\r\nHost: gate\r\n\r\n"
            let headRequest = Self.request(segment).replacingOccurrences(of: "GET /v1/auth-request", with: "HEAD /v1/auth-request")
            let bytes = Self.request(segment) + probe + Self.request(token) + headRequest + Self.request(none, close: true)
            let answers = try Self.answers(try await offloaded { try RawHTTP.exchange(port: port, Array(bytes.utf8)) })
            #expect(answers.map(\.tokenStatus) == ["VALID_SESSION", nil, "VALID_TOKEN", "VALID_SESSION", "NO_TOKEN"])
            #expect(answers.map(\.status) == [200, 200, 200, 200, 401])
            #expect(answers.dropFirst().first?.body == "ok\n", "the framework's answer, in its place")
        }
    }
}
