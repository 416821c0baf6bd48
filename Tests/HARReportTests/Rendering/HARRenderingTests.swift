import EntitlementTokens
import Testing

@testable import HARReport

/// Hostile strings in every field of a HAR reach the terminal escaped and
/// the JSON report as valid JSON that says them exactly.
@Suite struct HARRenderingTests {
    typealias F = HARFixtures

    /// Terminal controls, bidi overrides, line separators, quotes and markup.
    static let hostile = [
        "\u{1B}[2J\u{1B}]52;c;ZXZpbA==\u{07}", "\u{202E}gpj.exe", "a\u{2028}b\u{85}c", "\"},{\"kind\":\"x", "<script>alert(1)</script>",
        "\u{7F}\u{9B}31m",
    ]

    static func hostileHAR() -> [UInt8] {
        F.har(
            hostile.enumerated().map { index, evil in
                F.entry(
                    started: index == 0 ? evil : "2026-01-15T12:01:0\(index).000Z",
                    method: evil,
                    url: "https://\(index).example.test/\(evil)?__token__=\(evil)",
                    status: 403,
                    requestHeaders: [(evil, evil), ("Cookie", "\(evil)=\(evil); hdnts=\(evil)"), ("CTA-Common-Access-Token", evil)],
                    responseHeaders: [("Set-Cookie", "tg_md5=\(evil); Max-Age=\(evil)"), ("X-Token-Status", evil), ("Date", evil)],
                    postText: "{\"token\":\(F.quoted("PHNpZ25hdHVyZUluZm8" + evil))}",
                    body: "{\"session\":\(F.quoted(evil)),\"serializedToken\":\(F.quoted("<signatureInfo>" + evil))}",
                    mimeType: evil,
                    extra: ",\"_error\":\(F.quoted(evil))"
                )
            }
        )
    }

    @Test("the text report holds no raw control, bidi or line-separator character")
    func text() throws {
        let report = try F.report(Self.hostileHAR())
        #expect(report.timeline.count == Self.hostile.count)
        let text = HARReportText(report: report, source: "\u{1B}]0;title\u{07}").text.rendered
        for scalar in text.unicodeScalars where scalar != "\n" {
            #expect(
                !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || [0x2028, 0x2029].contains(scalar.value)
                    || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)),
                "U+\(String(scalar.value, radix: 16)) reached the terminal"
            )
        }
    }

    @Test("the JSON report is one valid object with every pinned member, hostile strings escaped")
    func json() throws {
        let report = try F.report(Self.hostileHAR())
        let bytes = HARReportJSON.encoded(report)
        var limits = JSONDocumentLimits()
        limits.maxBytes = 1 << 22
        limits.maxValues = 1 << 16
        let value = try JSONValue.readObject(Array(bytes.dropLast()), limits: limits)
        guard case .array(let entries)? = value["entries"], case .array(let findings)? = value["findings"], case .array? = value["credentials"] else {
            Issue.record("members missing")
            return
        }
        #expect(entries.count == Self.hostile.count)
        // The first entry's time is hostile too, so it sorts last: the methods are the same set.
        #expect(Set(entries.compactMap { $0["method"]?.stringValue }) == Set(Self.hostile))
        #expect(!findings.isEmpty)
        for finding in findings {
            #expect(finding["kind"]?.stringValue != nil && finding["message"]?.stringValue != nil)
            guard case .array? = finding["entries"] else {
                Issue.record("a finding without entries")
                continue
            }
        }
    }
}
