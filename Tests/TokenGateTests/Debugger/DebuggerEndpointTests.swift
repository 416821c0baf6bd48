import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The debugger's routes over HTTP (docs/DESIGN.md#the-web-debugger): strict headers on every
/// answer, expectations taken only by its own route, the replay store never
/// touched, loopback only.
@Suite struct DebuggerEndpointTests {
    let clock = GateFixtures.Clock()

    func debuggerServer() throws -> DebuggerServer {
        let options = try DebuggerOptions.parse(["--key", GateFixtures.publicKey])
        return try DebuggerServer(configuration: DebuggerConfiguration(options), logger: LogCapture().logger, clock: { clock.read() })
    }

    func post(_ client: any TestClientProtocol, _ uri: String, _ body: String) async throws -> (TestResponse, [[String: Any]]) {
        let response = try await client.executeRequest(uri: uri, method: .post, headers: [:], body: ByteBuffer(string: body))
        let object = try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
        return (response, object?["reports"] as? [[String: Any]] ?? [])
    }

    func expectStrictHeaders(_ response: TestResponse, _ what: String) {
        let csp = response["Content-Security-Policy"] ?? ""
        #expect(csp.hasPrefix(DebuggerFixtures.strictCSP), "\(what): CSP '\(csp)'")
        #expect(csp.contains("report-uri /debugger/csp-report"), "\(what)")
        #expect(response["X-Content-Type-Options"] == "nosniff", "\(what)")
        #expect(response["Referrer-Policy"] == "no-referrer", "\(what)")
        #expect(response["Cache-Control"] == "no-store", "\(what)")
    }

    @Test func everyDebuggerAnswerCarriesTheStrictHeaders() async throws {
        let server = try debuggerServer()
        try await server.application().test(.router) { client in
            let gets = [
                "/debugger", "/debugger/debugger.js", "/debugger/debugger.css", "/debugger/favicon.svg",
                "/debugger/csp-reports", "/debugger/nothing-here", "/debugger/report", "/", "/healthz", "/v1/verify",
            ]
            var statuses: [String: Int] = [:]
            for path in gets {
                let response = try await client.executeRequest(uri: path, method: .get, headers: [:], body: nil)
                statuses[path] = response.status.code
                expectStrictHeaders(response, "GET \(path)")
            }
            #expect(
                statuses == [
                    "/debugger": 200, "/debugger/debugger.js": 200, "/debugger/debugger.css": 200,
                    "/debugger/favicon.svg": 200, "/debugger/csp-reports": 200, "/debugger/nothing-here": 404, "/debugger/report": 405,
                    "/": 303, "/healthz": 200, "/v1/verify": 404,
                ]
            )
            let page = try await client.executeRequest(uri: "/debugger", method: .get, headers: [:], body: nil)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            let script = try await client.executeRequest(uri: "/debugger/debugger.js", method: .get, headers: [:], body: nil)
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            let (report, reports) = try await post(client, "/debugger/report", GateFixtures.token())
            expectStrictHeaders(report, "POST /debugger/report")
            #expect(reports.count == 1)
            let (bad, _) = try await post(client, "/debugger/report?now=yesterday", GateFixtures.token())
            #expect(bad.status == .badRequest)
            expectStrictHeaders(bad, "POST /debugger/report (bad now)")
            let (empty, _) = try await post(client, "/debugger/report", "\n")
            #expect(empty.status == .badRequest)
            expectStrictHeaders(empty, "POST /debugger/report (empty)")
        }
    }

    /// The page is the program's own text: no inline script or style, no
    /// external resource, and the script has no HTML or code sink.
    @Test func thePageIsSelfContainedAndHasNoHTMLSinks() {
        let html = String(decoding: DebuggerAssets.page, as: UTF8.self)
        let favicon = String(decoding: DebuggerAssets.favicon, as: UTF8.self)
        #expect(!html.contains("<style"))
        #expect(html.components(separatedBy: "<script").count == 2)
        #expect(!favicon.contains("<script") && !favicon.lowercased().contains("href"))
        #expect(html.contains("<script src=\"/debugger/debugger.js\" defer></script>"))
        #expect(!html.contains("style="))
        #expect(html.lowercased().firstMatch(of: /\son[a-z]+\s*=/) == nil, "an inline event handler")
        #expect(!html.contains("http:") && !html.contains("https:") && !html.contains("//cdn"))
        let script = String(decoding: DebuggerAssets.script, as: UTF8.self)
        for sink in [
            "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setTimeout('",
            "localStorage", "sessionStorage", "document.cookie", "indexedDB",
        ] {
            #expect(!script.contains(sink), "the script uses \(sink)")
        }
        let stylesheet = String(decoding: DebuggerAssets.stylesheet, as: UTF8.self)
        #expect(!stylesheet.contains("url("), "the style sheet loads something")
        #expect(!stylesheet.contains("@import"))
    }

    /// The library's additive member: asked for, the three parts are the decoded XML cut at the signed bytes;
    /// not asked for, the report object is as before.
    @Test func decodedXMLIsTheWholeXMLCutAtTheSignedBytesOnlyWhenAskedFor() throws {
        var request = GateFixtures.request()
        request.signatureForm = .closed
        request.encoding = .raw
        let signed = try TokenMinter.mint(request, key: GateFixtures.signingKey)
        // Signature after the token, with white space around: all of it outside the signed bytes.
        let element = try #require(signed.firstRange(of: "<authToken>").map { String(signed[$0.lowerBound...]) })
        let block = String(signed[..<signed.firstRange(of: "<authToken>")!.lowerBound])
        let xml = "  \n" + element + "\n" + block + "\n"
        let token = try TokenDecoder().decode(Array(xml.utf8))
        let report = TokenReport(input: 1, source: "test", line: 1, decoded: .success(token))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json(showDecodedXML: true))) as? [String: Any])
        let parts = try #require(object["decodedXML"] as? [String: String])
        #expect(parts["signed"] == element)
        #expect(parts["signed"] == String(decoding: token.signedBytes, as: UTF8.self))
        #expect((parts["beforeSigned"] ?? "") + (parts["signed"] ?? "") + (parts["afterSigned"] ?? "") == String(decoding: token.xml, as: UTF8.self))
        #expect(parts["afterSigned"]?.contains("<signatureInfo>") == true)
        let plain = try #require(try JSONSerialization.jsonObject(with: Data(report.json())) as? [String: Any])
        #expect(plain["decodedXML"] == nil)
        #expect(report.json() == report.json(showDecodedXML: false))
        let failed = TokenReport(input: 1, source: "test", line: 1, decoded: .failure(TokenError(.invalidBase64, stage: .transport, "x")))
        let failedObject = try #require(try JSONSerialization.jsonObject(with: Data(failed.json(showDecodedXML: true))) as? [String: Any])
        #expect(failedObject["decodedXML"] is NSNull)
    }

    @Test func theReportHasTheDecodedXMLCutAtTheSignedBytesAndTheNowUsed() async throws {
        let server = try debuggerServer()
        try await server.application().test(.router) { client in
            let response = try await client.executeRequest(
                uri: "/debugger/report?now=2016-03-17T22:05:31Z",
                method: .post,
                headers: [:],
                body: ByteBuffer(string: GateFixtures.token())
            )
            let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
            #expect(object["now"] as? String == "2016-03-17T22:05:31Z")
            let report = try #require((object["reports"] as? [[String: Any]])?.first)
            #expect(report["status"] as? String == "VALID_TOKEN")
            let decoded = try #require(report["decodedXML"] as? [String: String])
            #expect(decoded["beforeSigned"]?.hasPrefix("<signatureInfo>") == true)
            #expect(decoded["signed"]?.hasPrefix("<authToken>") == true)
            #expect(decoded["signed"]?.hasSuffix("</authToken>") == true)
            #expect(decoded["afterSigned"] == "")
        }
    }

    /// A format error past the transport stage comes with the XML it points
    /// into, so the page can mark it even when the token arrived in Base64;
    /// a token, and a transport error, come with null.
    @Test func aFormatErrorComesWithTheXMLItPointsInto() async throws {
        let server = try debuggerServer()
        let malformedXML = "<signatureInfo>AAAA<signatureInfo>\n<authToken>\n  <requestorID>TNT</requestorID\n</authToken>"
        let body = [GateFixtures.token(), Data(malformedXML.utf8).base64EncodedString(), "%%%notbase64"].joined(separator: "\n")
        try await server.application().test(.router) { client in
            let response = try await client.executeRequest(uri: "/debugger/report", method: .post, headers: [:], body: ByteBuffer(string: body))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
            let reports = try #require(object["reports"] as? [[String: Any]])
            #expect(reports.map { $0["status"] as? String } == ["VALID_TOKEN", "INVALID_TOKEN_FORMAT", "INVALID_TOKEN_FORMAT"])
            let errorXML = try #require(object["errorXML"] as? [Any])
            #expect(errorXML.count == 3)
            #expect(errorXML.first is NSNull)
            #expect(errorXML.dropFirst().first as? String == malformedXML)
            #expect(errorXML.last is NSNull)
        }
    }

    /// The page's expectations reach the debugger's route; the production
    /// route of the same gate ignores them and keeps the configured requestor.
    @Test func onlyTheDebuggerRouteTakesTheRequestorMVPDAndLeeway() async throws {
        let runtime = try GateFixtures.runtime(["--debugger"], clock: clock)
        let token = GateFixtures.token()
        try await runtime.application().test(.router) { client in
            let (_, debugger) = try await post(client, "/debugger/report?requestor=CNN", token)
            #expect(debugger.first?["status"] as? String == "INVALID_REQUESTOR_ID")
            let (_, mvpd) = try await post(client, "/debugger/report?mvpd=Other&mvpd=Another", token)
            #expect(mvpd.first?["status"] as? String == "UNTRUSTED_MVPD")
            let (_, allowed) = try await post(client, "/debugger/report?mvpd=Other&mvpd=Comcast_SSO", token)
            #expect(allowed.first?["status"] as? String == "VALID_TOKEN")
            // The token lives 7 minutes from the fixtures' issue time; the clock is 1 minute in.
            let (_, late) = try await post(client, "/debugger/report?now=2016-03-17T22:09:00Z&leeway=0", token)
            #expect(late.first?["status"] as? String == "TOKEN_EXPIRED")
            let (_, tolerated) = try await post(client, "/debugger/report?now=2016-03-17T22:09:00Z&leeway=120", token)
            #expect(tolerated.first?["status"] as? String == "VALID_TOKEN")

            let production = try await client.executeRequest(
                uri: "/v1/verify?requestor=CNN&mvpd=Other&leeway=999",
                method: .post,
                headers: [:],
                body: ByteBuffer(string: token)
            )
            let reports = try JSONSerialization.jsonObject(with: Data(buffer: production.body)) as? [[String: Any]]
            #expect(reports?.first?["status"] as? String == "VALID_TOKEN")
            let foreign = GateFixtures.token(GateFixtures.request(requestor: "CNN"))
            let refused = try await client.executeRequest(
                uri: "/v1/verify?requestor=CNN",
                method: .post,
                headers: [:],
                body: ByteBuffer(string: foreign)
            )
            let refusedReports = try JSONSerialization.jsonObject(with: Data(buffer: refused.body)) as? [[String: Any]]
            #expect(refusedReports?.first?["status"] as? String == "INVALID_REQUESTOR_ID")
        }
    }

    /// Inspecting a captured media token must not spend its one use.
    @Test func theDebuggerNeverTouchesTheReplayStore() async throws {
        let runtime = try GateFixtures.runtime(["--debugger", "--replay", "memory"], clock: clock)
        let media = GateFixtures.token()
        try await runtime.application().test(.router) { client in
            for _ in 0..<2 {
                let (_, reports) = try await post(client, "/debugger/report?resource=TNT", media)
                #expect(reports.first?["status"] as? String == "VALID_TOKEN")
                let skipped = (reports.first?["checksSkipped"] as? [[String: Any]])?.compactMap { $0["check"] as? String }
                #expect(skipped?.contains("replay") == true)
            }
            let played = try await client.authRequest("/a?token=\(media)")
            #expect(played.tokenStatus == "VALID_TOKEN")
            let again = try await client.authRequest("/a?token=\(media)")
            #expect(again.tokenStatus == "TOKEN_REPLAYED")
            let (_, afterPlay) = try await post(client, "/debugger/report", media)
            #expect(afterPlay.first?["status"] as? String == "VALID_TOKEN")
        }
    }

    @Test func serveHasNoDebuggerUnlessAsked() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        try await runtime.application().test(.router) { client in
            let page = try await client.executeRequest(uri: "/debugger", method: .get, headers: [:], body: nil)
            #expect(page.status == .notFound)
            let report = try await client.executeRequest(
                uri: "/debugger/report",
                method: .post,
                headers: [:],
                body: ByteBuffer(string: GateFixtures.token())
            )
            #expect(report.status == .notFound)
        }
        let withDebugger = try GateFixtures.runtime(["--debugger"], clock: clock)
        try await withDebugger.application().test(.router) { client in
            let page = try await client.executeRequest(uri: "/debugger", method: .get, headers: [:], body: nil)
            #expect(page.status == .ok)
            expectStrictHeaders(page, "serve --debugger: GET /debugger")
            // The gate's own answers keep their headers (no CSP needed on an auth answer).
            let healthz = try await client.executeRequest(uri: "/healthz", method: .get, headers: [:], body: nil)
            #expect(healthz.status == .ok)
        }
    }

    @Test(arguments: [
        ("127.0.0.1:8090", true), ("127.0.0.2:1", true), ("localhost:8090", true), ("[::1]:8090", true),
        ("0.0.0.0:8090", false), ("10.1.2.3:8090", false), ("[::]:8090", false), ("example.com:80", false),
        ("127.0.0.1.example.com:80", false), ("127.1:80", false),
    ])
    func theDebuggerListensOnLoopbackOnlyUnlessTheInsecureDoorIsOpen(listen: String, loopback: Bool) throws {
        let options = try DebuggerOptions.parse(["--key", GateFixtures.publicKey, "--listen", listen])
        #expect(((try? DebuggerConfiguration(options)) != nil) == loopback, "debugger --listen \(listen)")
        let open = try DebuggerOptions.parse(["--key", GateFixtures.publicKey, "--listen", listen, "--insecure-listen-anywhere"])
        #expect((try? DebuggerConfiguration(open)) != nil)
        #expect(((try? GateFixtures.configuration(["--debugger", "--listen", listen])) != nil) == loopback, "serve --debugger --listen \(listen)")
        #expect((try? GateFixtures.configuration(["--listen", listen])) != nil)
    }

    @Test func aSettingsFileCanTurnTheDebuggerOn() throws {
        #expect(
            try ConfigFile.arguments(from: "debugger = true\nlisten = 127.0.0.1:8089", source: "c") == ["--debugger", "--listen", "127.0.0.1:8089"]
        )
        #expect(try ConfigFile.arguments(from: "debugger = false", source: "c") == [])
        let configuration = try GateFixtures.configuration(ConfigFile.arguments(from: "debugger = true", source: "c"))
        #expect(configuration.debugger)
    }

    @Test func theRefusalSaysWhatToDo() throws {
        let options = try DebuggerOptions.parse(["--key", GateFixtures.publicKey, "--listen", "0.0.0.0:8090"])
        #expect(throws: GateConfigurationError.self) { try DebuggerConfiguration(options) }
        do {
            _ = try DebuggerConfiguration(options)
        } catch {
            #expect(error.message.contains("loopback") && error.message.contains("--insecure-listen-anywhere"))
        }
        #expect(try DebuggerConfiguration(DebuggerOptions.parse(["--key", GateFixtures.publicKey])).pageURL == "http://127.0.0.1:8090/debugger")
        #expect(throws: GateConfigurationError.self) { try DebuggerConfiguration(DebuggerOptions.parse([])) }
    }

    @Test func violationReportsAreKeptBounded() async throws {
        let server = try debuggerServer()
        try await server.application().test(.router) { client in
            for index in 0..<(CSPViolationLog.maximumReports + 3) {
                let response = try await client.executeRequest(
                    uri: "/debugger/csp-report",
                    method: .post,
                    headers: [:],
                    body: ByteBuffer(string: "{\"csp-report\":{\"n\":\(index)}}")
                )
                #expect(response.status == .noContent)
            }
            let huge = String(repeating: "x", count: CSPViolationLog.maximumReportBytes * 2)
            _ = try await client.executeRequest(uri: "/debugger/csp-report", method: .post, headers: [:], body: ByteBuffer(string: huge))
            let list = try await client.executeRequest(uri: "/debugger/csp-reports", method: .get, headers: [:], body: nil)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: list.body)) as? [String: Any])
            #expect(object["total"] as? Int == CSPViolationLog.maximumReports + 4)
            let reports = try #require(object["reports"] as? [String])
            #expect(reports.count == CSPViolationLog.maximumReports)
            #expect(reports.allSatisfy { $0.utf8.count <= CSPViolationLog.maximumReportBytes + 64 })
        }
    }
}
