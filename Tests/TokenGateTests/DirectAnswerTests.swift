import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
@testable import TokenGate

/// The auth answers written from the event loop over a real socket
/// (docs/DESIGN.md#answers-written-from-the-event-loop): byte for byte the
/// framework's answer to the same request (the same request with a one-byte
/// body takes the framework's way), counted, and in order with the
/// framework's answers on one connection.
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
            let opened = try await RawHTTP.fetch(port: port, "/v1/auth-request", headers: [
                ("X-Original-URI", "/hls/tnt/master.m3u8?token=\(GateFixtures.token())"), ("X-Token-Resource", "TNT"),
            ])
            try await body(port, try #require(opened["X-Token-Session"]))
        }
    }

    @Test func eachAnswerAtOnceIsTheFrameworksAnswerAndIsCounted() async throws {
        try await withGate { port, session in
            let segment = [("X-Original-URI", "/hls/tnt/seg1.ts"), ("X-Token-Resource", "TNT")]
            let cases: [(status: String, fields: [(String, String)])] = [
                ("VALID_SESSION", segment + [("Cookie", "tokengate_session=\(session)")]),
                ("VALID_SESSION", segment + [("X-Token-Session", session)]),
                ("INVALID_SESSION", segment + [("Cookie", "tokengate_session=not-a-session")]),
                ("NO_TOKEN", segment),
                ("NO_EXPECTED_RESOURCE", [("X-Original-URI", "/hls/tnt/seg1.ts")]),
                ("BAD_REQUEST", [("X-Original-URI", "/hls/tnt/seg1.ts?tgs=a&tgs=b"), ("X-Token-Resource", "TNT")]),
            ]
            for (status, fields) in cases {
                let direct = try Self.answers(try await offloaded { try RawHTTP.exchange(port: port, Array(Self.request(fields, close: true).utf8)) })
                let framework = try Self.answers(try await offloaded {
                    try RawHTTP.exchange(port: port, Array(Self.request(fields, body: "x", close: true).utf8))
                })
                #expect(direct.count == 1 && framework.count == 1)
                guard let direct = direct.first, let framework = framework.first else { continue }
                #expect(direct.tokenStatus == status)
                #expect(direct.status == framework.status)
                let withoutDate = { (answer: RawHTTP.Answer) in answer.headers.filter { $0.name.lowercased() != "date" }.map { "\($0.name): \($0.value)" } }
                #expect(withoutDate(direct) == withoutDate(framework), "\(status)")
                #expect(direct["Date"]?.hasSuffix(" GMT") == true && direct["Date"]?.count == framework["Date"]?.count, "\(direct["Date"] ?? "-")")
            }
            let metrics = try await RawHTTP.fetch(port: port, "/metrics").body
            #expect(metrics.contains("\ntokengate_direct_answers_total \(cases.count)\n"), "one per request without a body, none with one")
        }
    }

    /// The quick look's promise: where it says a request carries no token and
    /// no CAT, the reading finds none, for every carrier and its near misses.
    @Test func theQuickLookNeverMissesATokenOrACAT() throws {
        let configuration = try GateFixtures.configuration([
            "--token-param", "token", "--token-param", "t", "--token-header", "X-Media-Token", "--token-cookie", "media_token",
            "--cat-key", "\(CATGateFixtures.hmacPath) edge-1",
        ])
        let reader = GateRequestReader(configuration: configuration)
        let uris: [String?] = [nil, "/a", "/a?", "/a?token=x", "/a?t=x", "/a?x=1&t=", "/a?%74oken=x", "/a?xtoken=1", "/a#?token=x",
                               "/a?cat=x", "/a?CAT=x", "/a?tgs=x", "/a?token", "/a?a=b&token=x#f"]
        let fieldSets: [HTTPFields] = [
            [:], [HTTPField.Name("X-Media-Token")!: "x"], [HTTPField.Name("x-media-token")!: ""],
            [.cookie: "media_token=x"], [.cookie: "a=b; media_token=x"], [.cookie: "media_tokens=x"], [.cookie: "tokengate_session=x"],
            [HTTPField.Name("CTA-Common-Access-Token")!: "x"], [.cookie: "cat=x"], [.cookie: "xcat=1; a=cat"],
        ]
        var quiet = 0
        for uri in uris {
            for fields in fieldSets {
                let read = reader.read(originalURI: uri?[...], headers: fields, now: GateFixtures.issued)
                if !reader.mayCarryTokenOrCAT(originalURI: uri?[...], headers: fields) {
                    quiet += 1
                    #expect(read.tokens.isEmpty && read.cats.isEmpty, "\(uri ?? "-") \(fields): the quick look missed what the reading found")
                }
            }
        }
        #expect(quiet > 10, "the quick look says no for requests without a credential")
    }

    /// One connection, four requests in one write: the framework's answer to
    /// the media token comes between two answered at once, in the order asked.
    @Test func pipelinedAnswersComeInTheOrderAsked() async throws {
        try await withGate { port, session in
            let segment = [("X-Original-URI", "/hls/tnt/seg1.ts"), ("X-Token-Resource", "TNT"), ("Cookie", "tokengate_session=\(session)")]
            let token = [("X-Original-URI", "/hls/tnt/seg2.ts?token=\(GateFixtures.token())"), ("X-Token-Resource", "TNT")]
            let none = [("X-Original-URI", "/hls/tnt/seg3.ts"), ("X-Token-Resource", "TNT")]
            let bytes = Self.request(segment) + Self.request(token) + Self.request(segment) + Self.request(none, close: true)
            let answers = try Self.answers(try await offloaded { try RawHTTP.exchange(port: port, Array(bytes.utf8)) })
            #expect(answers.map(\.tokenStatus) == ["VALID_SESSION", "VALID_TOKEN", "VALID_SESSION", "NO_TOKEN"])
        }
    }
}
