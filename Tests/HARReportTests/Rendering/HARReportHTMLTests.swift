import EntitlementTokens
import Testing
import TokenTestSupport

@testable import HARReport

/// The HTML report read back by libxml2, as XML (it must be well-formed) and
/// as HTML: what a parser makes of it is checked, not its bytes.
@Suite struct HARReportHTMLTests {
    typealias F = HARFixtures

    static func page(_ har: [UInt8], source: String = "capture.har") throws -> (report: HARReport, bytes: [UInt8], root: MarkupElement) {
        let report = try F.report(har)
        let bytes = HARReportHTML(report: report, source: source).bytes
        let root = try #require(MarkupReading.root(of: bytes), "the page is not well-formed XML")
        return (report, bytes, root)
    }

    /// Every entry of HARRenderingTests' hostile table, plus a very long field.
    static func hostilePage() throws -> (report: HARReport, bytes: [UInt8], root: MarkupElement) {
        try page(HARRenderingTests.hostileHAR(), source: "<script>alert('source')</script>\u{1B}]0;x\u{07}&\"")
    }

    @Test("the page is well-formed XML, reads as HTML, and holds no script, no event handler, no style attribute")
    func wellFormed() throws {
        let (_, bytes, root) = try Self.hostilePage()
        #expect(root.name == "html")
        let html = try #require(MarkupReading.root(of: bytes, html: true), "libxml2's HTML parser read nothing")
        for tree in [root, html] {
            let names = Set(tree.all.map(\.name))
            #expect(names.contains("svg") && names.contains("table") && names.contains("style"))
            #expect(names.isDisjoint(with: ["script", "link", "img", "image", "iframe", "object", "embed", "use", "foreignObject", "base"]))
            for element in tree.all {
                for attribute in element.attributes {
                    #expect(!attribute.name.lowercased().hasPrefix("on"), "an event handler \(attribute.name)")
                    #expect(attribute.name != "style", "a style attribute")
                }
            }
        }
    }

    @Test("nothing external: no src, every href a #anchor that exists, no url( or @import")
    func nothingExternal() throws {
        let (_, bytes, root) = try Self.hostilePage()
        let elements = root.all
        let ids = Set(elements.compactMap { $0.attribute("id") })
        var hrefs = 0
        for element in elements {
            #expect(element.attribute("src") == nil)
            #expect(element.attribute("xlink:href") == nil)
            for attribute in element.attributes {
                #expect(!attribute.value.contains("url("))
            }
            if let href = element.attribute("href") {
                hrefs += 1
                #expect(href.hasPrefix("#") && ids.contains(String(href.dropFirst())), "href \(href) names no anchor of the page")
            }
        }
        #expect(hrefs > 0)
        let style = try #require(elements.first { $0.name == "style" }).text
        #expect(!style.contains("url(") && !style.contains("@import"))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.contains("url(") && !text.contains("@import") && !text.contains("<script") && !text.contains("<link"))
    }

    @Test("the Content-Security-Policy forbids everything but the one style block, by its hash")
    func contentSecurityPolicy() throws {
        let (_, _, root) = try Self.hostilePage()
        let meta = try #require(root.all.first { $0.name == "meta" && $0.attribute("http-equiv") == "Content-Security-Policy" })
        let policy = try #require(meta.attribute("content"))
        #expect(policy == HARReportHTML.contentSecurityPolicy)
        #expect(policy.hasPrefix("default-src 'none';"))
        #expect(!policy.contains("unsafe-inline") && !policy.contains("script-src") && !policy.contains("http"))
        // The hash is over the style block as the parser reads it.
        let styles = root.all.filter { $0.name == "style" }
        #expect(styles.count == 1)
        let hash = "sha256-" + Base64.encode(SHA256Hasher.hash(Array(styles[0].text.utf8)).bytes)
        #expect(policy.contains("style-src '\(hash)'"))
        // The meta comes before anything the policy governs.
        let head = try #require(root.all.first { $0.name == "head" })
        let inHead = head.all.dropFirst()
        #expect(inHead.first?.attribute("charset") == "utf-8")
        #expect(inHead.dropFirst().first?.attribute("http-equiv") == "Content-Security-Policy")
    }

    @Test("hostile strings come out as the same visible text, in element text and in attributes")
    func hostileStringsEscaped() throws {
        let (report, bytes, root) = try Self.hostilePage()
        let elements = root.all
        let cells = elements.filter { $0.name == "td" && $0.attribute("class") == "url mono" }
        #expect(cells.count == report.timeline.count)
        for entry in report.timeline {
            let row = try #require(elements.first { $0.attribute("id") == "entry-\(entry.number)" })
            let cell = try #require(row.all.first { $0.attribute("class") == "url mono" })
            // What the reader sees is the HAR's string with only its controls made visible.
            #expect(cell.text == TerminalText.escaped(entry.method) + " " + TerminalText.escaped(entry.host) + TerminalText.escaped(entry.path))
            #expect(cell.attribute("title") == TerminalText.escaped(HARReportHTML.tooltip(entry.url)))
        }
        // Each hostile method, markup and quotes included, is text of the page, not markup.
        let allText = root.text
        for evil in HARRenderingTests.hostile { #expect(allText.contains(TerminalText.escaped(evil)), "\(TerminalText.escaped(evil))") }
        #expect(cells.contains { $0.text.hasPrefix("<script>alert(1)</script>") })
        // (Each hostile string is also a __token__ value, so the URL in the attribute has it replaced:
        // veryLongField checks markup characters in an attribute.)
        // The source's name, in the title and the heading.
        #expect(elements.first { $0.name == "title" }?.text == "HAR report: <script>alert('source')</script>\\x1b]0;x\\x07&\"")
        // No raw control character reaches the page (a document cannot carry them).
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars where scalar != "\n" {
            #expect(scalar.value >= 0x20 && !(0x7F...0x9F).contains(scalar.value) && !(0x202A...0x202E).contains(scalar.value))
        }
    }

    @Test("the one escaping function: the five markup characters and every control")
    func escaping() {
        #expect(MarkupText.forPage("<a href=\"x\" title='y'>&amp;</a>") == "&lt;a href=&quot;x&quot; title=&apos;y&apos;&gt;&amp;amp;&lt;/a&gt;")
        #expect(MarkupText.forPage("\u{1B}[2J\u{202E}\u{0}") == "\\x1b[2J\\u{202E}\\x00")
        #expect(MarkupText.forPage("plain text é") == "plain text é")
        #expect(MarkupText.escaped(Array("'\"<>&".utf8)) == Array("&apos;&quot;&lt;&gt;&amp;".utf8))
    }

    @Test("a very long field stays one escaped attribute and one cell, its tooltip cut")
    func veryLongField() throws {
        let long = String(repeating: "<\"'&", count: 10_000)
        let (report, bytes, root) = try Self.page(F.har([F.entry(url: "https://a.example.test/\(long)", status: 403)]))
        let cell = try #require(root.all.first { $0.attribute("class") == "url mono" })
        #expect(cell.text.hasSuffix(long))
        let title = try #require(cell.attribute("title"))
        #expect(title.count == HARReportHTML.maximumTooltipCharacters + 1 && title.hasSuffix("…"))
        #expect(title.hasPrefix("https://a.example.test/<\"'&<\"'&"))
        #expect(report.timeline.count == 1)
        #expect(bytes.count < 400_000)
    }

    @Test("each finding links to its entries' rows")
    func findingsLinkToEntries() throws {
        let (report, _, root) = try Self.page(try F.sample("har/cookie-expired.har"))
        #expect(!report.findings.isEmpty)
        let elements = root.all
        let items = elements.filter { ($0.attribute("id") ?? "").hasPrefix("finding-") }
        #expect(items.count == report.findings.count)
        for (item, finding) in zip(items, report.findings) {
            let targets = item.all.compactMap { $0.attribute("href") }
            #expect(targets.first == finding.entries.first.map { "#entry-\($0)" })
            for target in targets {
                let row = elements.first { $0.attribute("id") == String(target.dropFirst()) }
                #expect(row?.name == "tr", "\(target) has no row")
            }
        }
        #expect(elements.first { $0.attribute("id") == "finding-1" }?.attribute("class") == "failure")
    }

    @Test("each request is a tick coloured by its status; each credential a bar")
    func ticksColouredByStatus() throws {
        let statuses = [200, 302, 403, 404, 503, 0]
        let har = F.har(
            statuses.enumerated().map { index, status in
                F.entry(
                    started: "2026-01-15T12:01:0\(index).000Z",
                    url: "https://a.example.test/seg\(index).ts?hdnts=exp=1768478500~acl=/*~hmac=\(String(repeating: "ab", count: 32))",
                    status: status
                )
            }
        )
        let (report, _, root) = try Self.page(har)
        let ticks = root.all.filter { $0.name == "rect" && $0.attribute("class") == "tick" }
        #expect(ticks.count == statuses.count)
        let expected = ["200": "#2e7d32", "302": "#2e7d32", "403": "#ef6c00", "404": "#ef6c00", "503": "#c62828", "0": "#424242"]
        for tick in ticks {
            let status = try #require(tick.attribute("data-status"))
            #expect(tick.attribute("fill") == expected[status], "status \(status)")
        }
        #expect(Set(expected.values).count == 4)
        // Left to right in time.
        let xs = ticks.compactMap { $0.attribute("x").flatMap(Int.init) }
        #expect(xs == xs.sorted() && xs.first != xs.last)
        // The one token the requests carried is one bar, ending at its expiry (2026-01-15T12:01:40Z).
        let bars = root.all.filter { $0.name == "rect" && $0.attribute("class") == "bar" }
        #expect(bars.count == Set(report.timeline.flatMap { $0.credentials.map(\.fingerprint) }).count)
        #expect(bars.count == 1)
        #expect(bars.first?.text.contains("valid until 2026-01-15T12:01:40Z") == true)
    }

    @Test("past the tick bound the page draws the first ones and says so")
    func tickBound() throws {
        let count = HARReportHTML.maximumTicks + 3
        let entries = (0..<count).map { index in
            F.entry(
                started:
                    "2026-01-15T12:\(10 + index / 6000):\(String(100 + (index / 100) % 60).dropFirst()).\(String(1000 + index % 100).dropFirst())Z",
                url: "https://a.example.test/\(index).ts"
            )
        }
        let (_, bytes, root) = try Self.page(F.har(entries))
        #expect(root.all.filter { $0.attribute("class") == "tick" }.count == HARReportHTML.maximumTicks)
        #expect(root.text.contains("The first \(HARReportHTML.maximumTicks) of \(count) requests are drawn"))
        // Linear: a few hundred bytes a tick.
        #expect(bytes.count < count * 400)
    }
}
