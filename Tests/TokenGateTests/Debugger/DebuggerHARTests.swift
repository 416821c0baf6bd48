import EntitlementTokens
import Foundation
import HARReport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// `POST /debugger/har`: a capture uploaded to the debugger gives the report
/// `tokeninspect har` gives, with the debugger's keys; at most 64 MiB; what is
/// not a HAR is a typed 4xx; every answer carries the debugger's strict headers.
@Suite struct DebuggerHARTests {
    let clock = GateFixtures.Clock()

    static let sample = GateFixtures.repository.appendingPathComponent("Samples/har/cookie-expired.har")

    func debuggerServer() throws -> DebuggerServer {
        let options = try DebuggerOptions.parse(["--key", GateFixtures.publicKey])
        return try DebuggerServer(configuration: DebuggerConfiguration(options), logger: LogCapture().logger, clock: { clock.read() })
    }

    /// The report the library makes of `bytes` with the debugger's keys.
    static func libraryReport(_ bytes: [UInt8], keys: HARKeys) throws -> HARReport {
        var reader = HARReader()
        var analysis = HARAnalysis(keys: keys)
        try reader.feed(bytes.span) { analysis.add($0) }
        try reader.finish { analysis.add($0) }
        return analysis.finish(readerNotes: reader.notes)
    }

    func post(_ client: any TestClientProtocol, _ uri: String, _ body: [UInt8], headers: HTTPFields = [:]) async throws -> TestResponse {
        try await client.executeRequest(uri: uri, method: .post, headers: headers, body: ByteBuffer(bytes: body))
    }

    static func errorCode(_ response: TestResponse) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])?["code"] as? String
    }

    func expectStrictHeaders(_ response: TestResponse, _ what: String) {
        let csp = response["Content-Security-Policy"] ?? ""
        #expect(csp.hasPrefix("default-src 'none'; script-src 'self'; style-src 'self'"), "\(what): CSP '\(csp)'")
        #expect(csp.contains("frame-ancestors 'none'") && csp.contains("require-trusted-types-for 'script'"), "\(what)")
        #expect(response["X-Content-Type-Options"] == "nosniff", "\(what)")
        #expect(response["Cache-Control"] == "no-store", "\(what)")
    }

    /// Under `serve --debugger` the upload is judged with the gate's own `--cat-key` keys and
    /// session secrets: a session this gate issued verifies in the report, not only followed.
    @Test func underServeTheGatesCATKeysAndSessionSecretsJudgeTheUpload() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = GateFixtures.sessionSecret(in: directory)
        let runtime = try GateFixtures.runtime(["--debugger", "--session-secret", secret, "--cat-key", "\(CATGateFixtures.hmacPath) edge-1"])
        let keys = try #require(runtime.debugger).har.keys()
        #expect(keys.catKeys.map(\.id) == ["edge-1"])
        let secrets = try #require(keys.sessionSecrets)
        let session = try PlaybackSessions.load(paths: [secret], lifetimeSeconds: 600)
            .issue(resource: "TNT", deviceID: nil, requestor: .init("TNT"), keyID: 1, now: TokenTimestamp.now()).credential
        #expect((try? secrets.open(session[...].utf8).get()) != nil)
        let har = Array(
            (#"{"log":{"entries":[{"startedDateTime":"\#(TokenTimestamp.now().iso8601)","request":{"method":"GET","#
                + #""url":"https://site.test/hls/tnt/a.ts?tgs=\#(session)","headers":[]},"response":{"status":200,"headers":[]}}]}}"#).utf8
        )
        let report = try Self.libraryReport(har, keys: keys)
        #expect(report.timeline.flatMap(\.credentials).map(\.verdict.status) == ["VALID_SESSION"])
        // The standalone debugger has neither.
        let standalone = try debuggerServer().endpoints.har.keys()
        #expect(standalone.catKeys.isEmpty && standalone.sessionSecrets == nil)
    }

    @Test func anUploadIsAnsweredWithTheCLIsReport() async throws {
        let server = try debuggerServer()
        let har = Array(try Data(contentsOf: Self.sample))
        let keys = server.endpoints.har.keys()
        #expect(keys.tokenKeys?.keys.count == 1)
        let expected = try Self.libraryReport(har, keys: keys)
        try await server.application().test(.router) { client in
            let page = try await post(client, "/debugger/har?name=cookie-expired.har", har, headers: [.contentType: "application/json"])
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            expectStrictHeaders(page, "POST /debugger/har")
            // The debugger's policy, its style-src widened by the report's one block and nothing else.
            #expect(
                page["Content-Security-Policy"]
                    == DebuggerHeaders.contentSecurityPolicy.replacingOccurrences(
                        of: "style-src 'self';",
                        with: "style-src 'self' '\(HARReportHTML.styleHash)';"
                    )
            )
            let html = String(buffer: page.body)
            #expect(html == String(decoding: HARReportHTML(report: expected, source: "cookie-expired.har").bytes, as: UTF8.self))
            #expect(html.contains("COOKIE_EXPIRED") && html.contains("<svg"))
            let json = try await post(client, "/debugger/har?format=json", har)
            #expect(json.status == .ok)
            #expect(Array(json.body.readableBytesView) == HARReportJSON.encoded(expected))
            expectStrictHeaders(json, "POST /debugger/har?format=json")
        }
    }

    @Test func whatIsNotAHARIsATypedRefusal() async throws {
        let server = try debuggerServer()
        try await server.application().test(.router) { client in
            for body in ["[1,2]", "not json", "{\"log\":{}}", "{\"log\":{\"entries\":[", "", "{\"log\":{\"entries\":[],\"entries\":[]}}"] {
                let answer = try await post(client, "/debugger/har", Array(body.utf8))
                #expect(answer.status == .unprocessableContent, "\(body)")
                #expect(Self.errorCode(answer) == "NOT_A_HAR", "\(body)")
                expectStrictHeaders(answer, "POST /debugger/har \(body)")
            }
            let form = try await post(
                client,
                "/debugger/har",
                Array("--b\r\nContent-Disposition: form-data; name=\"har\"\r\n\r\n{}\r\n--b--\r\n".utf8),
                headers: [.contentType: "multipart/form-data; boundary=b"]
            )
            #expect(form.status == .unsupportedMediaType && Self.errorCode(form) == "HAR_AS_FORM")
            let format = try await post(client, "/debugger/har?format=xml", Array("{}".utf8))
            #expect(format.status == .badRequest && Self.errorCode(format) == "BAD_QUERY")
            let unknown = try await post(client, "/debugger/har?now=1", Array("{}".utf8))
            #expect(unknown.status == .badRequest && Self.errorCode(unknown) == "BAD_QUERY")
            let get = try await client.executeRequest(uri: "/debugger/har", method: .get, headers: [:], body: nil)
            #expect(get.status == .methodNotAllowed)
            expectStrictHeaders(get, "GET /debugger/har")
        }
    }

    /// 64 MiB is read; one byte more is 413, declared or counted.
    @Test func theBoundIsSixtyFourMebibytes() async throws {
        let server = try debuggerServer()
        let entry = """
            {"startedDateTime":"2026-01-15T12:01:00Z","request":{"method":"GET","url":"https://a.example.test/x.ts","headers":[]},"response":{"status":200,"headers":[]}}
            """
        let head = Array("{\"log\":{\"version\":\"1.2\",\"entries\":[\(entry)]".utf8)
        let tail = Array("}}".utf8)
        var exactly = head
        exactly.append(contentsOf: repeatElement(UInt8(ascii: " "), count: DebuggerHAR.maximumBytes - head.count - tail.count))
        exactly.append(contentsOf: tail)
        #expect(exactly.count == 64 * 1024 * 1024)
        var over = exactly
        over.insert(UInt8(ascii: " "), at: head.count)
        let (atTheBound, pastIt) = (exactly, over)
        try await server.application().test(.router) { client in
            let read = try await post(client, "/debugger/har?format=json", atTheBound)
            #expect(read.status == .ok)
            let object = try JSONSerialization.jsonObject(with: Data(buffer: read.body)) as? [String: Any]
            #expect((object?["entries"] as? [Any])?.count == 1)
            let counted = try await post(client, "/debugger/har", pastIt)
            #expect(counted.status == .contentTooLarge)
            #expect(Self.errorCode(counted) == "HAR_TOO_LARGE")
            expectStrictHeaders(counted, "POST /debugger/har (64 MiB + 1)")
            // Declared only (the test client sets Content-Length from a body, so none is given):
            // refused before a byte is read.
            let declared = try await client.executeRequest(
                uri: "/debugger/har",
                method: .post,
                headers: [.contentLength: String(DebuggerHAR.maximumBytes + 1)],
                body: nil
            )
            #expect(declared.status == .contentTooLarge && Self.errorCode(declared) == "HAR_TOO_LARGE")
        }
    }

    /// The page offers the upload, and its script posts the file itself to the route.
    @Test func thePageOffersTheUpload() {
        let html = String(decoding: DebuggerAssets.page, as: UTF8.self)
        #expect(html.contains("id=\"har-file\"") && html.contains("type=\"file\""))
        let script = String(decoding: DebuggerAssets.script, as: UTF8.self)
        #expect(script.contains("'/debugger/har"))
    }
}
