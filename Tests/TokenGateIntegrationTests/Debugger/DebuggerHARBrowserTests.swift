import EntitlementTokens
import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The HAR upload and its HTML report in a real headless Chromium
/// (docs/HAR.md#the-html-report): a capture whose fields hold markup is chosen
/// on the debugger's page and read, its findings shown as text; the report
/// the route answers, opened from a file as a ticket's attachment is, is styled
/// (so its policy's hash is the style block's), runs nothing, loads nothing,
/// and the browser reports no violation.
@Suite(
    .serialized,
    .enabled(if: Browser.available, "chromium and chromedriver not installed (apt-get install chromium chromium-driver)"),
    .holdsMachineLock
)
struct DebuggerHARBrowserTests {
    static let method = "<script>window.__pwned = 1</script>"
    static let path = "/hls/<img src=x onerror=\"window.__pwned = 2\">/seg1.ts"
    static let error = "'><svg onload=\"window.__pwned = 3\"><style>body{margin:0}</style>\u{202E}gpj.exe"

    /// Two requests: a refused segment whose method and path are markup, and one that got no answer.
    static func hostileHAR() throws -> Data {
        func entry(_ started: String, method: String, url: String, status: Int, error: String?) -> [String: Any] {
            var entry: [String: Any] = [
                "startedDateTime": started,
                "request": ["method": method, "url": url, "headers": [] as [Any]],
                "response": ["status": status, "headers": [] as [Any]],
            ]
            if let error { entry["_error"] = error }
            return entry
        }
        let log: [String: Any] = [
            "log": [
                "version": "1.2",
                "entries": [
                    entry("2026-01-15T12:01:00.000Z", method: method, url: "https://edge.example.test" + path, status: 403, error: nil),
                    entry("2026-01-15T12:01:02.000Z", method: "GET", url: "https://edge.example.test/hls/seg2.ts", status: 0, error: error),
                ],
            ]
        ]
        return try JSONSerialization.data(withJSONObject: log)
    }

    @Test func anUploadIsReadOnThePageAndItsReportRunsNothing() async throws {
        let har = try Self.hostileHAR()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("har-browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let harFile = directory.appendingPathComponent("hostile.har")
        try har.write(to: harFile)
        try await DebuggerBrowserTests.withDebugger { origin, browser in
            let port = Int(origin.split(separator: ":").last!)!
            // The page: the file chosen as a person would (WebDriver types its path into the input), then read.
            let page = try await offloadedPage { () -> [String: Any] in
                try browser.open(origin + "/debugger")
                let session = browser.session ?? ""
                let found = try browser.command("POST", "/session/\(session)/element", ["using": "css selector", "value": "#har-file"])
                let element = (found as? [String: Any])?.values.first as? String ?? ""
                try browser.command("POST", "/session/\(session)/element/\(element)/value", ["text": harFile.path])
                try browser.execute("document.getElementById('har-run').click();")
                guard try browser.wait(for: "return !document.getElementById('har-save').hidden;") else {
                    throw Browser.Failure(
                        description: "no report: \(try browser.execute("return document.getElementById('har-state').textContent;") ?? "")"
                    )
                }
                return try browser.execute(
                    """
                    return {
                      state: document.getElementById('har-state').textContent,
                      findings: [...document.querySelectorAll('#har-findings li')].map((item) => item.textContent),
                      pwned: typeof window.__pwned, scripts: document.scripts.length, images: document.images.length,
                    };
                    """
                ) as? [String: Any] ?? [:]
            }
            #expect((page["state"] as? String)?.hasPrefix("2 entries, ") == true, "\(page)")
            let findings = page["findings"] as? [String] ?? []
            #expect(findings.contains { $0.hasPrefix("REQUEST_FAILED (#2): ") && $0.contains(TerminalText.escaped(Self.error)) }, "\(findings)")
            #expect(page["pwned"] as? String == "undefined")
            #expect(page["scripts"] as? Int == 1 && page["images"] as? Int == 0)

            // The report itself, as the route answers it, opened from a file.
            var upload = Array("POST /debugger/har?name=hostile.har HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n".utf8)
            upload += Array("Content-Type: application/json\r\nContent-Length: \(har.count)\r\n\r\n".utf8) + Array(har)
            let sent = upload
            let raw = try await offloaded { try RawHTTP.exchange(port: port, sent, limit: 4 << 20) }
            let split = try #require(raw.firstRange(of: Array("\r\n\r\n".utf8)))
            #expect(String(decoding: raw[..<split.lowerBound], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
            let reportFile = directory.appendingPathComponent("report.html")
            try Data(raw[split.upperBound...]).write(to: reportFile)
            let report = try await offloadedPage { () -> [String: Any] in
                // What the debugger's page logged, before the report's page is opened.
                let pageConsole = try browser.log("browser").compactMap { entry -> String? in
                    entry["level"] as? String == "SEVERE" ? "\(entry["message"] ?? "")" : nil
                }
                try browser.open(reportFile.absoluteString)
                var answer =
                    try browser.execute(
                        """
                        const cell = (n) => document.querySelector('#entry-' + n + ' td.url');
                        return {
                          margin: getComputedStyle(document.body).marginTop,
                          pwned: typeof window.__pwned, scripts: document.scripts.length, images: document.images.length,
                          handlers: document.querySelectorAll('[onerror], [onload], [onclick], [style]').length,
                          styles: document.querySelectorAll('style').length,
                          request: cell(1).textContent, title: cell(1).getAttribute('title'),
                          ticks: [...document.querySelectorAll('rect.tick')].map((tick) => tick.getAttribute('fill')),
                          link: document.querySelector('#finding-1 a').getAttribute('href'),
                        };
                        """
                    ) as? [String: Any] ?? [:]
                answer["pageConsole"] = pageConsole
                return answer
            }
            #expect((report["pageConsole"] as? [String])?.isEmpty == true, "\(report["pageConsole"] ?? "")")
            // Styled: the policy allowed the style block by its hash (body{margin:1.5em} at 14px).
            #expect(report["margin"] as? String == "21px", "\(report)")
            #expect(report["pwned"] as? String == "undefined")
            #expect(report["scripts"] as? Int == 0 && report["images"] as? Int == 0 && report["handlers"] as? Int == 0)
            #expect(report["styles"] as? Int == 1)
            let request = report["request"] as? String ?? ""
            #expect(request.hasPrefix(TerminalText.escaped(Self.method) + " ") && request.hasSuffix(Self.path), "\(request)")
            #expect(report["title"] as? String == "https://edge.example.test" + Self.path)
            #expect(report["ticks"] as? [String] == ["#ef6c00", "#424242"])
            #expect((report["link"] as? String)?.hasPrefix("#entry-") == true)
            // Nothing was refused or failed to load, on the page or in the report.
            let console = try await offloaded {
                try browser.log("browser").compactMap { entry -> String? in
                    entry["level"] as? String == "SEVERE" ? "\(entry["message"] ?? "")" : nil
                }
            }
            #expect(console.isEmpty, "\(console)")
            let violations = try await RawHTTP.fetch(port: port, "/debugger/csp-reports")
            #expect(violations.body.hasPrefix("{\"total\":0,"), "\(violations.body)")
        }
    }
}
