import EntitlementTokens
import Foundation
import IntegrationSupport
import ServiceLifecycle
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The debugger's page in a real headless Chromium (docs/DESIGN.md#the-web-debugger): what it shows
/// for a valid, an expired, a forged and a malformed token; hostile text shown
/// as text with nothing run and no CSP violation; the fragment round-trip;
/// nothing requested off the server's origin and nothing stored. A screenshot
/// is written to `$TOKENINSPECT_TEST_ARTIFACTS` (default `.build/test-artifacts/`);
/// the pasted key, the summary lines, the side-by-side views and the
/// screenshot of docs/DEBUGGER.md are tested in `DebuggerPageLayoutTests`.
@Suite(
    .serialized,
    .enabled(if: Browser.available, "chromium and chromedriver not installed (apt-get install chromium chromium-driver)"),
    .holdsMachineLock
)
struct DebuggerBrowserTests {
    static let clock = GateFixtures.Clock()

    /// A debugger on a free loopback port, with the fixtures' keys and clock (a minute after their tokens' issue time).
    /// `now`: the server's clock (the fixtures' by default; `TokenTimestamp.now` for docs/DEBUGGER.md's screenshot).
    static func withDebugger(now: (@Sendable () -> TokenTimestamp)? = nil, _ body: @Sendable (String, Browser) async throws -> Void) async throws {
        let options = try DebuggerOptions.parse(["--key", GateFixtures.publicKey])
        let clock = Self.clock
        let server = try DebuggerServer(
            configuration: DebuggerConfiguration(options),
            logger: LogCapture().logger,
            clock: now ?? { clock.read() }
        )
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: server.application(port: 0) { continuation.yield($0.localAddress?.port ?? 0) })],
                logger: LogCapture().logger
            )
        )
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let browser = try await offloaded { try Browser() }
            do {
                try await body("http://127.0.0.1:\(port)", browser)
            } catch {
                _ = try? await offloaded { browser.stop() }
                await group.triggerGracefulShutdown()
                throw error
            }
            _ = try? await offloaded { browser.stop() }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    func withDebugger(_ body: @Sendable (String, Browser) async throws -> Void) async throws {
        try await Self.withDebugger(body)
    }

    /// Pastes `text` (and `key` into the key box: "" empties it) and runs; waits for the page to render the answer.
    static func paste(_ text: String, key: String? = nil, into browser: Browser) throws {
        let before = try browser.execute("return Number(document.getElementById('results').dataset.generation || 0);") as? Int ?? 0
        if let key { try browser.execute("document.getElementById('key').value = arguments[0];", [key]) }
        try browser.execute("document.getElementById('input').value = arguments[0]; document.getElementById('run').click();", [text])
        let rendered = try browser.wait(
            for: """
                const results = document.getElementById('results');
                return Number(results.dataset.generation) > arguments[0] && (results.dataset.state === 'done' || results.dataset.state === 'failed');
                """,
            [before]
        )
        guard rendered else { throw Browser.Failure(description: "the page did not render an answer") }
    }

    static let mediaRSS =
        #"<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>TNT</title>"#
        + #"<item><title>Episode 12</title><guid>tnt-ep-12</guid><media:rating scheme="urn:v-chip">tv-14</media:rating></item></channel></rss>"#

    static let malformed = "<signatureInfo>AAAA<signatureInfo>\n<authToken>\n  <requestorID>TNT</requestorID\n</authToken>"

    static func artifactsDirectory() throws -> URL {
        let environment = ProcessInfo.processInfo.environment["TOKENINSPECT_TEST_ARTIFACTS"]
        let directory =
            environment.map { URL(fileURLWithPath: $0) }
            ?? GateFixtures.repository.appendingPathComponent(".build/test-artifacts")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func showsTheVerdictFieldsSignatureAndErrorOfEachToken() async throws {
        try await withDebugger { origin, browser in
            var expired = GateFixtures.request()
            expired.issueTime = GateFixtures.issued.adding(milliseconds: -86_400_000)!
            var withUnknownField = GateFixtures.request(resource: Self.mediaRSS)
            withUnknownField.extraFields = [(path: "deviceHint", value: "living-room")]
            let tokens = [
                GateFixtures.token(withUnknownField),
                GateFixtures.token(expired),
                GateFixtures.token(key: GateFixtures.untrustedKey),
                // Before the raw one, whose open element would take the next line into its record.
                Data(Self.malformed.utf8).base64EncodedString(),
                Self.malformed,
            ]
            let page = try await offloadedPage { () -> [String: Any] in
                try browser.open(origin + "/debugger#resource=TNT")
                try Self.paste(tokens.joined(separator: "\n"), into: browser)
                try browser.execute("document.getElementById('expand').click();")
                let shot = try browser.screenshot()
                try shot.write(to: Self.artifactsDirectory().appendingPathComponent("debugger-fixtures.png"))
                return try browser.execute(
                    """
                    const text = (root, selector) => { const node = root.querySelector(selector); return node ? node.textContent : null; };
                    const row = (root, part, field) => text(root, '.part-' + part + ' tr[data-field="' + field + '"] td');
                    return {
                      reports: [...document.querySelectorAll('.report')].map((report) => ({
                        status: text(report, '.banner .status'),
                        reason: text(report, '.banner .reason'),
                        colour: getComputedStyle(report.querySelector('.banner')).backgroundColor,
                        kind: row(report, 'token', 'kind'),
                        requestor: row(report, 'typed', 'requestorID'),
                        issued: row(report, 'times', 'issued'),
                        expires: row(report, 'times', 'expires'),
                        channel: row(report, 'rss', 'channel'), item: row(report, 'rss', 'item'),
                        guid: row(report, 'rss', 'guid'), rating: row(report, 'rss', 'rating'),
                        verifiedBy: row(report, 'signature', 'verified by'), form: row(report, 'signature', 'form'),
                        size: row(report, 'signature', 'size'),
                        signed: text(report, '.part-xml mark.signed'), xml: text(report, '.part-xml pre'),
                        errorMark: text(report, 'mark.error-mark'),
                        errorMarkTitle: report.querySelector('mark.error-mark')?.title ?? null,
                        errorMarkPane: report.querySelector('mark.error-mark')?.closest('.pane')?.classList[1] ?? null,
                        errorLine: text(report, '.error-line'),
                        errorCode: row(report, 'error', 'code'),
                        skipped: [...report.querySelectorAll('.part-checks li.skipped')].map((item) => item.textContent),
                        ran: [...report.querySelectorAll('.part-checks li.ran')].map((item) => item.textContent),
                        unknown: [...report.querySelectorAll('.part-fields tr.unknown')].map((row) => row.dataset.field),
                        fieldCount: report.querySelectorAll('.part-fields tr').length,
                      })),
                      stored: localStorage.length + sessionStorage.length + document.cookie.length,
                      href: location.href,
                    };
                    """
                ) as? [String: Any] ?? [:]
            }
            let reports = try #require(page["reports"] as? [[String: Any]])
            #expect(
                reports.map { $0["status"] as? String } == [
                    "VALID_TOKEN", "TOKEN_EXPIRED", "INVALID_SIGNATURE", "INVALID_TOKEN_FORMAT", "INVALID_TOKEN_FORMAT",
                ]
            )
            try #require(reports.count == 5)
            let (valid, expiredReport, forged, brokenInBase64, broken) = (reports[0], reports[1], reports[2], reports[3], reports[4])
            #expect(valid["colour"] as? String == "rgb(30, 125, 50)")
            #expect(forged["colour"] as? String == "rgb(179, 38, 30)")
            #expect(valid["kind"] as? String == "media")
            #expect(valid["requestor"] as? String == "TNT")
            #expect(valid["issued"] as? String == "2016-03-17T22:01:31Z1 min ago")
            #expect(valid["expires"] as? String == "2016-03-17T22:08:31Zin 6 min")
            #expect((expiredReport["expires"] as? String)?.hasSuffix("23 h 54 min ago") == true, "\(expiredReport["expires"] ?? "")")
            #expect((expiredReport["reason"] as? String)?.contains("expired") == true)
            #expect(valid["channel"] as? String == "TNT")
            #expect(valid["item"] as? String == "Episode 12")
            #expect(valid["guid"] as? String == "tnt-ep-12")
            #expect(valid["rating"] as? String == "tv-14")
            #expect((valid["verifiedBy"] as? String)?.contains("test-rsa2048.pub.pem") == true)
            #expect(valid["form"] as? String == "legacy")
            #expect(valid["size"] as? String == "256 bytes (RSA-2048)")
            #expect((valid["signed"] as? String)?.hasPrefix("<authToken>") == true)
            #expect((valid["signed"] as? String)?.hasSuffix("</authToken>") == true)
            #expect((valid["xml"] as? String)?.hasPrefix("<signatureInfo>") == true)
            #expect((valid["ran"] as? [String])?.contains("resource: ran") == true)
            #expect((valid["skipped"] as? [String])?.contains { $0.hasPrefix("replay: skipped") } == true)
            #expect(valid["unknown"] as? [String] == ["deviceHint"])
            #expect(valid["fieldCount"] as? Int == 7)
            #expect(forged["verifiedBy"] as? String == "no trusted key")
            // The malformed token: its record starts on line 5 of the input; the error is at 2:1 of its XML.
            #expect(broken["errorCode"] as? String == "unterminatedTokenElement")
            #expect(broken["errorMark"] as? String == "<")
            #expect(broken["errorMarkTitle"] as? String == "line 6, column 1")
            #expect(broken["errorLine"] as? String == "    6 | <authToken>\n", "\(broken["errorLine"] ?? "")")
            // Pasted as raw XML, the error is marked in what was pasted (the encoded pane) …
            #expect(broken["errorMarkPane"] as? String == "pane-encoded")
            // The same XML pasted as Base64: the mark is in the XML it decoded to, at its own 2:1.
            #expect(brokenInBase64["errorCode"] as? String == "unterminatedTokenElement")
            #expect(brokenInBase64["errorMark"] as? String == "<")
            #expect(brokenInBase64["errorMarkTitle"] as? String == "line 2, column 1")
            #expect(brokenInBase64["errorLine"] as? String == "    2 | <authToken>\n", "\(brokenInBase64["errorLine"] ?? "")")
            // … pasted as Base64, in the XML it decoded to (the decoded pane).
            #expect(brokenInBase64["errorMarkPane"] as? String == "pane-decoded")
            #expect(page["stored"] as? Int == 0)
            #expect(page["href"] as? String == origin + "/debugger#resource=TNT")
        }
    }

    @Test func hostileTextIsShownEscapedAndRunsNothing() async throws {
        let resource = "<script>window.__pwned = 1</script>"
        let mvpd = "<img src=x onerror=\"window.__pwned = 2\">\u{202E}gpj.exe\nsecond line"
        let token = GateFixtures.hostileToken(.authorization, resource: resource, mvpd: mvpd)
        // The table the Swift rule and the script under node are checked against (DebuggerEscapingTests).
        let table = try HostileStrings.load()
        let hostileStrings = table.map(\.input)
        try await withDebugger { origin, browser in
            let page = try await offloadedPage { () -> [String: Any] in
                try browser.open(origin + "/debugger")
                try Self.paste(token, into: browser)
                return try browser.execute(
                    """
                    const cell = (field) => { const node = document.querySelector('.part-typed tr[data-field="' + field + '"] td'); return node ? node.textContent : null; };
                    return {
                      status: document.querySelector('.banner .status').textContent,
                      resource: cell('resourceID'), mvpd: cell('mvpdID'),
                      pwned: typeof window.__pwned,
                      scripts: document.scripts.length, images: document.images.length,
                      handlers: document.querySelectorAll('[onerror], [onload], [onclick]').length,
                      escaped: arguments[0].map((text) => window.tokenDebugger.escapeText(text)),
                    };
                    """,
                    [hostileStrings]
                ) as? [String: Any] ?? [:]
            }
            #expect(page["status"] as? String == "VALID_TOKEN")
            #expect(page["resource"] as? String == TerminalText.escaped(resource))
            #expect(page["mvpd"] as? String == TerminalText.escaped(mvpd))
            #expect((page["mvpd"] as? String)?.contains("\\u{202E}gpj.exe\\nsecond line") == true)
            #expect(page["pwned"] as? String == "undefined")
            #expect(page["scripts"] as? Int == 1)
            #expect(page["images"] as? Int == 0)
            #expect(page["handlers"] as? Int == 0)
            // The page's escaping is the CLI's, on the same strings: the table's.
            #expect(page["escaped"] as? [String] == table.map(\.escaped))
            #expect(page["escaped"] as? [String] == hostileStrings.map { TerminalText.escaped($0) })

            // Nothing was blocked: no violation report and no error in the console.
            let violations = try await RawHTTP.fetch(port: Int(origin.split(separator: ":").last!)!, "/debugger/csp-reports")
            #expect(violations.body.hasPrefix("{\"total\":0,"), "\(violations.body)")
            let console = try await offloaded {
                try browser.log("browser").compactMap { entry -> String? in
                    entry["level"] as? String == "SEVERE" ? "\(entry["message"] ?? "")" : nil
                }
            }
            #expect(console.isEmpty, "\(console)")

            // And the collector does catch one: a blocked load is reported.
            let port = Int(origin.split(separator: ":").last!)!
            try await offloaded {
                _ = try browser.execute(
                    "const image = document.createElement('img'); image.src = 'https://example.invalid/x.png'; document.body.append(image);"
                )
            }
            var reported = false
            for _ in 0..<200 where !reported {
                reported = try await RawHTTP.fetch(port: port, "/debugger/csp-reports").body.contains("example.invalid")
                if !reported { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(reported, "the CSP violation was not reported to /debugger/csp-report")
        }
    }

    /// A CDN paste (docs/DESIGN.md#reading-cdn-tokens-back): the sample CAT's kind, carrier, claims and
    /// diagnostic notation, and an EdgeAuth token whose `data` holds markup, shown as text with nothing run.
    @Test func showsAPastedCDNTokensKindAndFieldsAsText() async throws {
        let cat = try String(contentsOf: GateFixtures.repository.appendingPathComponent("Samples/cdn/cat-header.txt"), encoding: .utf8)
        let hostile = "<img/src=x/onerror=window.__pwned=3>"
        let edgeAuth = "exp=1768492800~acl=/hls/tnt/*~data=\(hostile)~hmac=" + String(repeating: "ab", count: 32)
        try await withDebugger { origin, browser in
            let page = try await offloadedPage { () -> [String: Any] in
                try browser.open(origin + "/debugger")
                try Self.paste(cat + "\n" + edgeAuth, into: browser)
                try browser.execute("document.getElementById('expand').click();")
                let shot = try browser.screenshot()
                try shot.write(to: Self.artifactsDirectory().appendingPathComponent("debugger-cdn.png"))
                return try browser.execute(
                    """
                    const text = (root, selector) => { const node = root.querySelector(selector); return node ? node.textContent : null; };
                    const row = (root, part, field) => text(root, '.part-' + part + ' tr[data-field="' + field + '"] td');
                    return {
                      reports: [...document.querySelectorAll('.report')].map((report) => ({
                        chip: text(report, '.chip'), summaryKind: text(report, '.summary .kind'),
                        status: text(report, '.banner .status'),
                        kind: row(report, 'token', 'kind'), carrier: row(report, 'token', 'carrier'), name: row(report, 'token', 'name'),
                        fields: Object.fromEntries([...report.querySelectorAll('.part-fields tr')].map((row) => [row.dataset.field, row.querySelector('td').textContent])),
                        diagnostic: text(report, '.part-diagnostic pre'),
                        expires: row(report, 'times', 'expires'),
                        encoded: text(report, '.pane-encoded pre'),
                      })),
                      pwned: typeof window.__pwned, images: document.images.length,
                      handlers: document.querySelectorAll('[onerror], [onload], [onclick]').length,
                    };
                    """
                ) as? [String: Any] ?? [:]
            }
            let reports = try #require(page["reports"] as? [[String: Any]])
            try #require(reports.count == 2, "\(page)")
            let (catReport, edgeReport) = (reports[0], reports[1])
            #expect(catReport["chip"] as? String == "DECODED")
            #expect(catReport["summaryKind"] as? String == "cat")
            #expect(catReport["status"] as? String == "DECODED (not verified)")
            #expect(catReport["kind"] as? String == "cat")
            #expect(catReport["carrier"] as? String == "header")
            #expect(catReport["name"] as? String == "CTA-Common-Access-Token")
            let fields = try #require(catReport["fields"] as? [String: String])
            #expect(fields["iss"] == "TNT")
            #expect(fields["structure"] == "COSE_Mac0")
            #expect(fields["catu"]?.contains("/hls/tnt/") == true, "\(fields)")
            #expect((catReport["diagnostic"] as? String)?.contains("catu") == true)
            #expect((catReport["expires"] as? String)?.hasPrefix("2026-01-15T16:00:00Z") == true)
            #expect((catReport["encoded"] as? String)?.hasPrefix("CTA-Common-Access-Token: ") == true)
            #expect(edgeReport["kind"] as? String == "akamai")
            #expect((edgeReport["fields"] as? [String: String])?["data"] == hostile)
            #expect(page["pwned"] as? String == "undefined")
            #expect(page["images"] as? Int == 0)
            #expect(page["handlers"] as? Int == 0)
            let violations = try await RawHTTP.fetch(port: Int(origin.split(separator: ":").last!)!, "/debugger/csp-reports")
            #expect(violations.body.hasPrefix("{\"total\":0,"), "\(violations.body)")
        }
    }

    @Test func theExpectationsLiveInTheFragmentAndTheTokenNowhere() async throws {
        let token = GateFixtures.token()
        try await withDebugger { origin, browser in
            let fragment = "#resource=CNN&requestor=TNT&mvpd=Other&mvpd=Comcast_SSO&device=dev-1&now=2016-03-17T22%3A03%3A31Z&leeway=5"
            let state = try await offloadedPage { () -> [String: Any] in
                // The browser's own start page logs requests of its own: drained before the debugger loads.
                try browser.open("about:blank")
                _ = try browser.log("performance")
                try browser.open(origin + "/debugger" + fragment)
                let restored = try browser.execute(
                    """
                    return ['resource', 'requestor', 'mvpd', 'device', 'now', 'leeway'].map((id) => document.getElementById(id).value);
                    """
                )
                try browser.execute(
                    "document.getElementById('device').value = ''; document.getElementById('device').dispatchEvent(new Event('input'));"
                )
                try Self.paste(token, into: browser)
                let first = try browser.execute("return document.querySelector('.banner .status').textContent;")
                try browser.execute(
                    "const field = document.getElementById('resource'); field.value = 'TNT'; field.dispatchEvent(new Event('input'));"
                )
                let href = try browser.execute("return location.href;") as? String ?? ""
                // A reload of the shared link gives the same view (the token pasted as the player's URL this time).
                try browser.open(href)
                try Self.paste("https://player.example/watch?channel=tnt&token=\(token)#t=10", into: browser)
                let second = try browser.execute("return document.querySelector('.banner .status').textContent;")
                let warnings = try browser.execute("return [...document.querySelectorAll('.part-warnings li')].map((item) => item.textContent);")
                let relative = try browser.execute("return document.querySelector('.part-times tr[data-field=\"expires\"] .relative').textContent;")
                let stored = try browser.execute("return localStorage.length + sessionStorage.length + document.cookie.length;")
                let requests = try browser.log("performance").compactMap { entry -> String? in
                    guard let message = entry["message"] as? String,
                        let object = try? JSONSerialization.jsonObject(with: Data(message.utf8)) as? [String: Any],
                        let inner = object["message"] as? [String: Any], inner["method"] as? String == "Network.requestWillBeSent",
                        let params = inner["params"] as? [String: Any], let request = params["request"] as? [String: Any]
                    else { return nil }
                    return request["url"] as? String
                }
                return [
                    "restored": restored ?? [], "first": first ?? "", "href": href, "second": second ?? "", "warnings": warnings ?? [],
                    "relative": relative ?? "",
                    "stored": stored ?? -1, "requests": requests,
                ]
            }
            #expect(state["restored"] as? [String] == ["CNN", "TNT", "Other, Comcast_SSO", "dev-1", "2016-03-17T22:03:31Z", "5"])
            #expect(state["first"] as? String == "INVALID_RESOURCE_ID")
            let href = try #require(state["href"] as? String)
            #expect(href == origin + "/debugger#resource=TNT&requestor=TNT&mvpd=Other&mvpd=Comcast_SSO&now=2016-03-17T22%3A03%3A31Z&leeway=5")
            #expect(!href.contains(String(token.prefix(24))))
            #expect(state["second"] as? String == "VALID_TOKEN")
            #expect(state["warnings"] as? [String] == ["took the token from the 'token' parameter of the URL"])
            // "now" from the link, not the server's clock: the token expires 5 minutes after it.
            #expect(state["relative"] as? String == "in 5 min")
            #expect(state["stored"] as? Int == 0)
            let requests = try #require(state["requests"] as? [String])
            #expect(
                requests.contains {
                    $0.hasSuffix("/debugger/report?resource=TNT&requestor=TNT&now=2016-03-17T22%3A03%3A31Z&leeway=5&mvpd=Other&mvpd=Comcast_SSO")
                }
            )
            #expect(requests.contains(origin + "/debugger/debugger.js"))
            #expect(
                requests.allSatisfy { $0.hasPrefix(origin + "/") },
                "a request off the origin: \(requests.filter { !$0.hasPrefix(origin + "/") })"
            )
        }
    }
}
