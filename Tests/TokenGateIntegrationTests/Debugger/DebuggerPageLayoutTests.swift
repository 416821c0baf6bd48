import EntitlementTokens
import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The debugger's page in a real headless Chromium, for issue 23 item 9 and
/// docs/DESIGN.md#a-pasted-key: a pasted public key shown as not trusted (never
/// `VALID_TOKEN`), refused keys named, hostile text in a key shown as text;
/// one summary line per token, each expandable; the encoded and decoded views
/// side by side, stacked on a narrow window; "now" read by the server's one
/// parser; and docs/DEBUGGER.md's screenshot, taken with the real clock.
@Suite(
    .serialized,
    .enabled(if: Browser.available, "chromium and chromedriver not installed (apt-get install chromium chromium-driver)"),
    .holdsMachineLock
)
struct DebuggerPageLayoutTests {
    static let untrustedPublicPEM = DebuggerFixtures.untrustedPublicPEM

    /// Everything the page shows as a verdict, with its class and colour.
    static let verdictScript = """
        const text = (root, selector) => { const node = root.querySelector(selector); return node ? node.textContent : null; };
        return {
          reports: [...document.querySelectorAll('.report')].map((report) => ({
            status: report.dataset.status, pastedKey: report.dataset.pastedKey ?? null, open: report.open,
            shown: text(report, '.banner .status'), reason: text(report, '.banner .reason'),
            gate: text(report, '.banner .gate-verdict'),
            colour: getComputedStyle(report.querySelector('.banner')).backgroundColor,
            chip: text(report, '.summary .chip'), summary: text(report, '.summary'),
            pastedRow: text(report, '.part-signature tr[data-field="pasted key"] td'),
            pastedNote: text(report, '.pasted-note'),
          })),
          keyState: document.getElementById('key-state').dataset.state,
          keyText: document.getElementById('key-state').textContent,
          requestError: text(document, '.request-error'),
          everyText: document.body.textContent,
          images: document.images.length, scripts: document.scripts.length, pwned: typeof window.__pwned,
        };
        """

    @Test func aPastedKeyShowsWhatItSignedAsNotTrustedAndNeverValid() async throws {
        let forged = GateFixtures.token(key: GateFixtures.untrustedKey)
        let genuine = GateFixtures.token()
        try await DebuggerBrowserTests.withDebugger { origin, browser in
            let page = try await offloadedPage { () -> [String: Any] in
                try browser.open(origin + "/debugger")
                try DebuggerBrowserTests.paste("\(forged)\n\(genuine)", key: Self.untrustedPublicPEM, into: browser)
                return try browser.execute(Self.verdictScript) as? [String: Any] ?? [:]
            }
            let reports = try #require(page["reports"] as? [[String: Any]])
            try #require(reports.count == 2)
            let (signedByPaste, trusted) = (reports[0], reports[1])
            #expect(signedByPaste["status"] as? String == "INVALID_SIGNATURE")
            #expect(signedByPaste["pastedKey"] as? String == "SIGNED_BY_PASTED_KEY")
            #expect(signedByPaste["shown"] as? String == "SIGNED BY THE PASTED KEY")
            #expect((signedByPaste["reason"] as? String)?.contains("not trusted by this gate") == true)
            #expect((signedByPaste["gate"] as? String)?.hasPrefix("this gate: INVALID_SIGNATURE") == true)
            #expect(signedByPaste["colour"] as? String == "rgb(154, 103, 0)", "amber, neither the valid green nor the refusal red")
            #expect(signedByPaste["chip"] as? String == "PASTED KEY ONLY")
            #expect((signedByPaste["pastedRow"] as? String)?.hasSuffix("— not trusted by this gate") == true)
            #expect(trusted["shown"] as? String == "VALID_TOKEN")
            #expect(trusted["colour"] as? String == "rgb(30, 125, 50)")
            #expect(page["keyState"] as? String == "loaded")
            #expect((page["keyText"] as? String)?.contains("not trusted by this gate") == true)
            // VALID_TOKEN appears once on the page: the genuine token's banner and chip, never the forged one's.
            let forgedText = (signedByPaste["summary"] as? String ?? "") + (signedByPaste["shown"] as? String ?? "")
            #expect(forgedText.firstMatch(of: /(^|[^_])VALID_TOKEN/) == nil)
        }
    }

    @Test func theForgedTokenAloneWithItsKeyShowsNoValidAnywhere() async throws {
        let forged = GateFixtures.token(key: GateFixtures.untrustedKey)
        try await DebuggerBrowserTests.withDebugger { origin, browser in
            let page = try await offloadedPage { () -> [String: Any] in
                try browser.open(origin + "/debugger")
                try DebuggerBrowserTests.paste(forged, key: Self.untrustedPublicPEM, into: browser)
                return try browser.execute(Self.verdictScript) as? [String: Any] ?? [:]
            }
            let everything = try #require(page["everyText"] as? String)
            #expect(everything.firstMatch(of: /(^|[^_])VALID_TOKEN/) == nil, "the forged token looks genuine somewhere")
            #expect((page["reports"] as? [[String: Any]])?.first?["open"] as? Bool == true, "one token opens by itself")
        }
    }

    @Test func refusedAndHostileKeysAreNamedAsText() async throws {
        let privatePEM = (try? String(contentsOfFile: GateFixtures.untrustedKeyPath, encoding: .utf8)) ?? ""
        let hostileLabel = "-----BEGIN <img src=x onerror=\"window.__pwned=1\"> PRIVATE KEY-----\nAAAA\n-----END X-----\n"
        let hostileGarbage = "<script>window.__pwned = 2</script>\u{202E}\u{1B}[2J"
        let hostileJWK = #"{"kty":"RSA","n":"<img src=x onerror=window.__pwned=3>","d":"x"}"#
        let token = GateFixtures.token(key: GateFixtures.untrustedKey)
        try await DebuggerBrowserTests.withDebugger { origin, browser in
            let port = Int(origin.split(separator: ":").last!)!
            let pages = try await offloaded { () -> [PageAnswer] in
                try browser.open(origin + "/debugger")
                return try [privatePEM, hostileLabel, hostileGarbage, hostileJWK].map { key in
                    try DebuggerBrowserTests.paste(token, key: key, into: browser)
                    return PageAnswer(object: try browser.execute(Self.verdictScript) as? [String: Any] ?? [:])
                }
            }.map(\.object)
            try #require(pages.count == 4)
            for page in pages {
                #expect(page["keyState"] as? String == "refused")
                #expect((page["reports"] as? [[String: Any]])?.isEmpty == true, "a report was shown with a refused key")
                #expect((page["requestError"] as? String)?.hasPrefix("pasted key: ") == true)
                #expect(page["images"] as? Int == 0)
                #expect(page["scripts"] as? Int == 1)
                #expect(page["pwned"] as? String == "undefined")
            }
            #expect((pages[0]["keyText"] as? String)?.contains("a private key (PEM \"PRIVATE KEY\")") == true)
            #expect((pages[0]["keyText"] as? String)?.contains("openssl pkey -in KEY -pubout") == true)
            // The hostile label is shown as the text it is.
            #expect(
                (pages[1]["keyText"] as? String)?.contains("<img src=x onerror=\"window.__pwned=1\"> PRIVATE KEY") == true,
                "\(pages[1]["keyText"] ?? "")"
            )
            #expect((pages[3]["keyText"] as? String)?.contains("a JWK with private members (\"d\")") == true)
            let violations = try await RawHTTP.fetch(port: port, "/debugger/csp-reports")
            #expect(violations.body.hasPrefix("{\"total\":0,"), "\(violations.body)")
        }
    }

    @Test func severalTokensShowOneSummaryLineEachExpandable() async throws {
        var expired = GateFixtures.request(.authorization)
        expired.issueTime = GateFixtures.issued.adding(milliseconds: -86_400_000)!
        let tokens = [GateFixtures.token(), GateFixtures.token(expired), GateFixtures.token(key: GateFixtures.untrustedKey), "%%%"]
        try await DebuggerBrowserTests.withDebugger { origin, browser in
            let page = try await offloadedPage { () -> [String: Any] in
                try browser.open(origin + "/debugger")
                try DebuggerBrowserTests.paste(tokens.joined(separator: "\n"), into: browser)
                let lines = try browser.execute(
                    """
                    return [...document.querySelectorAll('details.report')].map((report) => ({
                      open: report.open, summary: report.querySelector('summary').textContent,
                      chip: report.querySelector('.summary .chip').textContent,
                      kind: report.querySelector('.summary .kind')?.textContent ?? null,
                      fields: report.querySelector('.summary .fields').textContent,
                      height: report.getBoundingClientRect().height,
                    }));
                    """
                )
                try browser.execute("document.querySelectorAll('details.report summary')[1].click();")
                let afterClick = try browser.execute("return [...document.querySelectorAll('details.report')].map((report) => report.open);")
                try browser.execute("document.getElementById('expand').click();")
                let expanded = try browser.execute("return [...document.querySelectorAll('details.report')].map((report) => report.open);")
                try browser.execute("document.getElementById('collapse').click();")
                let collapsed = try browser.execute("return [...document.querySelectorAll('details.report')].map((report) => report.open);")
                return ["lines": lines ?? [], "afterClick": afterClick ?? [], "expanded": expanded ?? [], "collapsed": collapsed ?? []]
            }
            let lines = try #require(page["lines"] as? [[String: Any]])
            try #require(lines.count == 4)
            #expect(lines.map { $0["open"] as? Bool } == [false, false, false, false])
            #expect(lines.map { $0["chip"] as? String } == ["VALID_TOKEN", "TOKEN_EXPIRED", "INVALID_SIGNATURE", "INVALID_TOKEN_FORMAT"])
            #expect(lines.map { $0["kind"] as? String } == ["media", "authorization", "media", nil])
            #expect((lines[0]["fields"] as? String) == "requestor TNT · resource TNT · MVPD Comcast_SSO · expires in 6 min")
            #expect((lines[1]["fields"] as? String)?.contains("expires 23 h 1 min ago") == true, "\(lines[1]["fields"] ?? "")")
            #expect((lines[2]["fields"] as? String)?.contains("signature") == true, "\(lines[2]["fields"] ?? "")")
            #expect((lines[3]["summary"] as? String)?.hasPrefix("#4") == true)
            // One line each: a collapsed report is about one line of text high.
            #expect(lines.allSatisfy { ($0["height"] as? Double ?? 999) < 60 }, "\(lines.map { $0["height"] ?? 0 })")
            #expect(page["afterClick"] as? [Bool] == [false, true, false, false])
            #expect(page["expanded"] as? [Bool] == [true, true, true, true])
            #expect(page["collapsed"] as? [Bool] == [false, false, false, false])
        }
    }

    @Test func encodedAndDecodedStandSideBySideAndStackOnANarrowWindow() async throws {
        var rawRequest = GateFixtures.request()
        rawRequest.encoding = .raw
        let raw = try TokenMinter.mint(rawRequest, key: GateFixtures.signingKey)
        var base64Request = GateFixtures.request()
        base64Request.encoding = .base64
        let base64 = try TokenMinter.mint(base64Request, key: GateFixtures.signingKey)
        try await DebuggerBrowserTests.withDebugger { origin, browser in
            let page = try await offloadedPage { () -> [String: Any] in
                try browser.open(origin + "/debugger")
                try DebuggerBrowserTests.paste(raw + "\n" + base64, into: browser)
                try browser.execute("document.getElementById('expand').click();")
                let measure = """
                    return [...document.querySelectorAll('.report')].map((report) => {
                      const encoded = report.querySelector('.pane-encoded').getBoundingClientRect();
                      const decoded = report.querySelector('.pane-decoded').getBoundingClientRect();
                      return { encodedLeft: encoded.left, encodedTop: encoded.top, encodedBottom: encoded.bottom, encodedWidth: encoded.width,
                               decodedLeft: decoded.left, decodedTop: decoded.top,
                               encodedMark: report.querySelector('.pane-encoded mark.signed')?.textContent ?? null,
                               encodedMarkTitle: report.querySelector('.pane-encoded mark.signed')?.title ?? null,
                               decodedMark: report.querySelector('.pane-decoded .part-xml mark.signed')?.textContent ?? null,
                               encodedText: report.querySelector('.pane-encoded pre.encoded').textContent };
                    });
                    """
                let wide = try browser.execute(measure)
                try browser.command("POST", "/session/\(browser.session ?? "none")/window/rect", ["width": 600, "height": 1800])
                let narrow = try browser.execute(measure)
                let width = try browser.execute("return window.innerWidth;")
                return ["wide": wide ?? [], "narrow": narrow ?? [], "width": width ?? 0]
            }
            let wide = try #require(page["wide"] as? [[String: Any]])
            let narrow = try #require(page["narrow"] as? [[String: Any]])
            try #require(wide.count == 2 && narrow.count == 2)
            for report in wide {
                let (encodedLeft, decodedLeft) = (report["encodedLeft"] as? Double ?? 0, report["decodedLeft"] as? Double ?? 0)
                #expect(encodedLeft < decodedLeft, "side by side: encoded on the left")
                #expect(report["encodedTop"] as? Double == report["decodedTop"] as? Double, "side by side: one row")
            }
            #expect((page["width"] as? Int ?? 9999) <= 600)
            for report in narrow {
                #expect(report["encodedLeft"] as? Double == report["decodedLeft"] as? Double, "stacked: one column")
                #expect((report["decodedTop"] as? Double ?? 0) >= (report["encodedBottom"] as? Double ?? 1), "stacked: decoded below encoded")
            }
            // Raw XML: the signed bytes marked in what was pasted are the signed bytes themselves.
            let rawReport = wide[0]
            #expect(rawReport["encodedText"] as? String == raw)
            #expect(rawReport["encodedMark"] as? String == rawReport["decodedMark"] as? String)
            #expect((rawReport["encodedMark"] as? String)?.hasPrefix("<authToken>") == true)
            #expect(rawReport["encodedMarkTitle"] as? String == "the signed bytes")
            // Base64: the characters that carry the signed bytes, which decode to text holding them.
            let base64Report = wide[1]
            let mark = try #require(base64Report["encodedMark"] as? String)
            #expect(base64Report["encodedMarkTitle"] as? String == "the Base64 characters that carry the signed bytes")
            let markStart = try #require(base64.range(of: mark)).lowerBound
            #expect(base64.distance(from: base64.startIndex, to: markStart) % 4 == 0)
            let decodedMark = String(
                decoding: Data(base64Encoded: mark + String(repeating: "=", count: (4 - mark.count % 4) % 4)) ?? Data(),
                as: UTF8.self
            )
            #expect(decodedMark.contains("<authToken>") && decodedMark.contains("</authToken>"), "\(decodedMark.prefix(80))")
            #expect(!decodedMark.contains("<signatureInfo>"), "the mark starts after the signature block")
        }
    }

    /// docs/DESIGN.md#the-sdks-other-credentials on the page: a software statement as jwt.io shows a JWT
    /// (header, claims, signature status), user metadata with its encrypted
    /// members marked and not decrypted; hostile claim text shown as text.
    @Test func credentialsAreShownAsJWTsAndMetadataWithEncryptedMembersMarked() async throws {
        let trusted = try DebuggerFixtures.statement(key: GateFixtures.signingKey)
        let forged = try DebuggerFixtures.statement(key: GateFixtures.untrustedKey)
        try await DebuggerBrowserTests.withDebugger { origin, browser in
            let page = try await offloadedPage { () -> [String: Any] in
                try browser.open(origin + "/debugger")
                try DebuggerBrowserTests.paste(
                    [trusted, forged, DebuggerFixtures.metadata].joined(separator: "\n"),
                    key: Self.untrustedPublicPEM,
                    into: browser
                )
                try browser.execute("document.getElementById('expand').click();")
                return try browser.execute(
                    """
                    const text = (root, selector) => root.querySelector(selector)?.textContent ?? null;
                    const row = (root, part, field) => text(root, '.part-' + part + ' tr[data-field="' + field + '"] td');
                    return {
                      reports: [...document.querySelectorAll('.report')].map((report) => ({
                        chip: text(report, '.summary .chip'), shown: text(report, '.banner .status'),
                        kid: row(report, 'header', 'kid'), alg: row(report, 'header', 'alg'),
                        softwareID: row(report, 'claims', 'software_id'), signature: row(report, 'signature', 'status'),
                        userID: row(report, 'metadata', 'userID'),
                        encryptedRows: [...report.querySelectorAll('.part-metadata tr.encrypted')].map((row) => row.dataset.field),
                        zip: row(report, 'metadata', 'zip'),
                      })),
                      bold: document.querySelectorAll('.report b').length,
                    };
                    """
                ) as? [String: Any] ?? [:]
            }
            let reports = try #require(page["reports"] as? [[String: Any]])
            try #require(reports.count == 3)
            let (statement, signedByPaste, metadata) = (reports[0], reports[1], reports[2])
            #expect(statement["chip"] as? String == "VALID_TOKEN")
            #expect(statement["kid"] as? String == "kid-1")
            #expect(statement["alg"] as? String == "RS256")
            #expect(statement["softwareID"] as? String == "app-<b>1</b>")
            #expect((statement["signature"] as? String)?.hasPrefix("verified by a key this gate trusts") == true)
            #expect(signedByPaste["chip"] as? String == "PASTED KEY ONLY")
            #expect(signedByPaste["shown"] as? String == "SIGNED BY THE PASTED KEY")
            #expect((signedByPaste["signature"] as? String)?.hasPrefix("signed by the pasted key — not trusted by this gate") == true)
            #expect(metadata["chip"] as? String == "DECODED")
            #expect(metadata["encryptedRows"] as? [String] == ["userID"])
            #expect((metadata["userID"] as? String)?.hasPrefix("encrypted (not decrypted here") == true)
            #expect(metadata["zip"] as? String == "[\"10001\"]")
            #expect(page["bold"] as? Int == 0, "a claim's markup became an element")
        }
    }

    /// A signed requestor ID on the page (docs/DESIGN.md#signed-requestor-ids): read as one when chosen,
    /// verified against the requestor field by the gate's key; forged with the
    /// pasted key, shown as signed by it, never valid.
    @Test func aSignedRequestorIDIsVerifiedAgainstTheRequestorField() async throws {
        let programmer = try ProgrammerPrivateKey(path: GateFixtures.keys.appendingPathComponent("test-rsa2048.pem").path)
        let stranger = try ProgrammerPrivateKey(path: GateFixtures.untrustedKeyPath)
        let trusted = try programmer.signRequestorID("TNT").base64
        let forged = try stranger.signRequestorID("TNT").base64
        try await DebuggerBrowserTests.withDebugger { origin, browser in
            let answer = try await offloadedPage { () -> [String: Any] in
                try browser.open(origin + "/debugger")
                try browser.execute(
                    "document.getElementById('kind').value = 'signed-requestor-id'; document.getElementById('requestor').value = 'TNT';"
                )
                try DebuggerBrowserTests.paste(trusted + "\n" + forged, key: Self.untrustedPublicPEM, into: browser)
                try browser.execute("document.getElementById('expand').click();")
                return try browser.execute(
                    """
                    return { reports: [...document.querySelectorAll('.report')].map((report) => ({
                      chip: report.querySelector('.summary .chip')?.textContent ?? null,
                      status: report.querySelector('.part-requestor-id tr[data-field="status"] td')?.textContent ?? null,
                    })) };
                    """
                ) as? [String: Any] ?? [:]
            }
            let page = answer["reports"] as? [[String: Any]] ?? []
            try #require(page.count == 2, "\(page)")
            #expect(page[0]["chip"] as? String == "VALID_TOKEN")
            #expect((page[0]["status"] as? String)?.hasPrefix("verified by a key this gate trusts") == true, "\(page[0])")
            #expect(page[1]["chip"] as? String == "PASTED KEY ONLY")
            #expect((page[1]["status"] as? String)?.hasPrefix("signed by the pasted key — not trusted by this gate") == true, "\(page[1])")
        }
    }

    /// "now" is sent as typed and read by the server's one parser
    /// (`TokenDateParser.parseNow`): every form the CLI's `--now` takes gives the same view.
    @Test func nowIsReadByTheOneParserInEveryFormTheCLIAccepts() async throws {
        let token = GateFixtures.token()
        let forms = [
            "2016-03-17T22:05:31Z", "2016-03-17T23:05:31.000+01:00", "2016-03-17 15:05:31 -0700",
            "2016/03/18 00:05:31 GMT +0200", "1458252331", "1458252331000",
        ]
        try await DebuggerBrowserTests.withDebugger { origin, browser in
            let views = try await offloaded { () -> [PageAnswer] in
                try browser.open(origin + "/debugger")
                return try forms.map { now in
                    try browser.execute("document.getElementById('now').value = arguments[0];", [now])
                    try DebuggerBrowserTests.paste(token, into: browser)
                    return PageAnswer(
                        object: try browser.execute(
                            """
                            const text = (selector) => document.querySelector(selector)?.textContent ?? null;
                            return { state: text('#state'), requestError: text('.request-error'), times: text('.part-times h3'),
                                     expires: text('.part-times tr[data-field="expires"] .relative') };
                            """
                        ) as? [String: Any] ?? [:]
                    )
                }
            }.map(\.object)
            for (now, view) in zip(forms, views) {
                #expect(view["times"] as? String == "Times (now 2016-03-17T22:05:31Z)", "\(now): \(view)")
                #expect(view["expires"] as? String == "in 3 min", "\(now)")
            }
            #expect((views[4]["state"] as? String)?.hasSuffix("(now 1458252331 read as epoch seconds)") == true, "\(views[4]["state"] ?? "")")
            #expect((views[5]["state"] as? String)?.hasSuffix("(now 1458252331000 read as epoch milliseconds)") == true)
            #expect((views[0]["state"] as? String)?.contains("read as") == false)
        }
    }

    /// docs/DEBUGGER.md's `docs/images/debugger.png`: the current page with the real
    /// clock — three tokens minted minutes ago: an expired one, one forged and
    /// checked with its pasted key, and a valid media token expanded last, so
    /// that the window shows the two summary lines above it.
    @Test func theDebuggerGuideScreenshotIsTheCurrentPageWithTheRealClock() async throws {
        let now = TokenTimestamp.now()
        var media = GateFixtures.request(resource: DebuggerBrowserTests.mediaRSS)
        media.issueTime = now.adding(milliseconds: -60_000)!
        var authorization = GateFixtures.request(.authorization)
        authorization.issueTime = now.adding(milliseconds: -7_200_000)!
        var forged = GateFixtures.request()
        forged.issueTime = now.adding(milliseconds: -30_000)!
        let tokens = [GateFixtures.token(authorization), GateFixtures.token(forged, key: GateFixtures.untrustedKey), GateFixtures.token(media)]
        try await DebuggerBrowserTests.withDebugger(now: { TokenTimestamp.now() }) { origin, browser in
            let page = try await offloadedPage { () -> [String: Any] in
                try browser.command("POST", "/session/\(browser.session ?? "none")/window/rect", ["width": 1440, "height": 1200])
                try browser.open(origin + "/debugger#resource=TNT")
                try DebuggerBrowserTests.paste(tokens.joined(separator: "\n"), key: Self.untrustedPublicPEM, into: browser)
                try browser.execute("document.querySelectorAll('details.report')[2].open = true;")
                try browser.screenshot().write(to: DebuggerBrowserTests.artifactsDirectory().appendingPathComponent("debugger.png"))
                return try browser.execute(Self.verdictScript) as? [String: Any] ?? [:]
            }
            let reports = try #require(page["reports"] as? [[String: Any]])
            #expect(reports.map { $0["chip"] as? String } == ["TOKEN_EXPIRED", "PASTED KEY ONLY", "VALID_TOKEN"])
            #expect(reports.map { $0["open"] as? Bool } == [false, false, true])
            #expect((reports.last?["summary"] as? String)?.contains("expires in ") == true, "\(reports.last?["summary"] ?? "")")
        }
    }
}
