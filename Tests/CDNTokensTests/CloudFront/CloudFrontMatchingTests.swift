import CDNTokens
import Foundation
import Testing
import TokenTestSupport

/// `Resource` wildcards and `AWS:SourceIp` ranges.
@Suite("CloudFront resource and IP matching")
struct CloudFrontMatchingTests {
    @Test(
        "wildcards match as CloudFront documents",
        arguments: [
            ("https://h/a/*", "https://h/a/b.ts", true),
            ("https://h/a/*", "https://h/a/", true),
            ("https://h/a/*", "https://h/a", false),
            ("https://h/a/*", "https://h/ab/c", false),
            ("https://h/a/*", "https://h/a/b?x=1", true),
            ("http*://h/*", "https://h/x", true),
            ("http*://h/*", "http://h/x", true),
            ("https://h/seg-00?.ts", "https://h/seg-001.ts", true),
            ("https://h/seg-00?.ts", "https://h/seg-00.ts", false),
            ("https://h/seg-00?.ts", "https://h/seg-0011.ts", false),
            ("https://h/a.mp4?q=1", "https://h/a.mp4?q=1", true),
            ("https://h/a.mp4?q=1", "https://h/a.mp4Xq=1", true),  // `?` is a wildcard, even where a URL has a '?'
            ("https://h/a.mp4", "https://h/a.mp4?q=1", false),
            ("*", "https://anything/at/all", true),
            ("*", "", true),
            ("**", "x", true),
            ("?", "", false),
            ("", "", true),
            ("", "x", false),
            ("a*b*c", "abc", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "acb", false),
            ("a*bc*bc", "abcbc", true),
            ("a*bc*bc", "abc", false),
            ("a*?b", "ab", false),
            ("a*?b", "axb", true),
            ("*x?z*", "wwxyyxyzww", true),
        ]
    )
    func wildcard(_ pattern: String, _ url: String, _ expected: Bool) {
        #expect(CloudFrontResourcePattern(pattern).matches(url) == expected)
    }

    @Test("the matcher agrees with a plain dynamic-programming matcher on random patterns")
    func agreesWithReference() {
        var random = SeededGenerator(seed: 0xC10D_F207)
        let alphabet = Array("ab?*".utf8)
        for _ in 0..<4000 {
            let pattern = String(decoding: (0..<random.below(12)).map { _ in alphabet[random.below(4)] }, as: UTF8.self)
            let text = String(decoding: (0..<random.below(14)).map { _ in alphabet[random.below(2)] }, as: UTF8.self)
            let expected = Self.reference(Array(pattern.utf8), Array(text.utf8))
            #expect(CloudFrontResourcePattern(pattern).matches(text) == expected, "\(pattern) vs \(text)")
        }
        // Pieces longer than one 64-bit word.
        let long = String(repeating: "ab", count: 70)
        #expect(CloudFrontResourcePattern("x*" + long + "*y").matches("x" + "ab" + long + "ba" + "y"))
        #expect(!CloudFrontResourcePattern("x*" + long + "b*y").matches("x" + long + "ay"))
        #expect(CloudFrontResourcePattern("x*" + String(repeating: "?", count: 130) + "*y").matches("x" + String(repeating: "q", count: 130) + "y"))
    }

    // The limit guards against a hang, not for speed: in the whole suite on two
    // cores its clock also counts the minute or more a test may wait for a thread.
    @Test("hostile patterns cost no backtracking", .timeLimit(.minutes(10)))
    func hostilePatterns() {
        let url = "https://h/" + String(repeating: "a", count: 8000)
        let starry = "https://h/" + String(repeating: "*a", count: 3000) + "*b"
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect(!CloudFrontResourcePattern(starry).matches(url))
            #expect(!CloudFrontResourcePattern("https://h/*" + String(repeating: "a", count: 4000) + "b*").matches(url))
            #expect(!CloudFrontResourcePattern("https://h/*" + String(repeating: "?", count: 4000) + "b*").matches(url))
        }
        #expect(elapsed < .seconds(5), "took \(elapsed)")
    }

    /// Reference: the textbook table over (pattern prefix, text prefix).
    static func reference(_ p: [UInt8], _ t: [UInt8]) -> Bool {
        var table = [[Bool]](repeating: [Bool](repeating: false, count: t.count + 1), count: p.count + 1)
        table[0][0] = true
        for i in 1...max(1, p.count) where i <= p.count {
            for j in 0...t.count {
                switch p[i - 1] {
                case UInt8(ascii: "*"): table[i][j] = table[i - 1][j] || (j > 0 && table[i][j - 1])
                case UInt8(ascii: "?"): table[i][j] = j > 0 && table[i - 1][j - 1]
                default: table[i][j] = j > 0 && table[i - 1][j - 1] && p[i - 1] == t[j - 1]
                }
            }
        }
        return table[p.count][t.count]
    }

    // MARK: - IP ranges

    @Test(
        "ranges contain what they should",
        arguments: [
            ("203.0.113.7/32", "203.0.113.7", true),
            ("203.0.113.7/32", "203.0.113.8", false),
            ("192.0.2.0/24", "192.0.2.255", true),
            ("192.0.2.0/24", "192.0.3.0", false),
            ("192.0.2.5/24", "192.0.2.77", true),
            ("10.0.0.0/9", "10.127.255.255", true),
            ("10.0.0.0/9", "10.128.0.0", false),
            ("0.0.0.0/0", "198.51.100.1", true),
            ("0.0.0.0/0", "2001:db8::1", false),
            ("2001:db8::/32", "2001:db8:ffff::1", true),
            ("2001:db8::/32", "2001:db9::1", false),
            ("2001:db8::7/128", "2001:0db8:0000:0000:0000:0000:0000:0007", true),
            ("::/0", "::1", true),
            ("::ffff:0:0/96", "::ffff:192.0.2.1", true),
            ("192.0.2.1/32", "::ffff:192.0.2.1", true),
            ("192.0.2.1/32", "::ffff:192.0.2.2", false),
            ("192.0.2.1/32", "192.0.2.01", false),
            ("192.0.2.1/32", "", false),
        ]
    )
    func contains(_ range: String, _ address: String, _ expected: Bool) throws {
        #expect(try CloudFrontIPRange(parsing: range).contains(address) == expected)
    }

    @Test(
        "single addresses are written /32 or /128, IPv6 canonically",
        arguments: [
            ("203.0.113.7", "203.0.113.7/32"),
            ("2001:DB8::7", "2001:db8::7/128"),
            ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1/128"),
            ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1/128"),
            ("0:0:0:0:0:0:0:0", "::/128"),
            ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8/128"),
            ("1:0:3:4:5:6:7:8", "1:0:3:4:5:6:7:8/128"),
            ("::ffff:192.0.2.1", "::ffff:c000:201/128"),
        ]
    )
    func singleAddress(_ address: String, _ text: String) throws {
        #expect(try CloudFrontIPRange(singleAddress: address).text == text)
    }

    @Test(
        "malformed ranges and addresses are refused",
        arguments: [
            "1.2.3.4", "1.2.3.4/", "1.2.3.4/01", "1.2.3.4/-1", "1.2.3/8", "1.2.3.4.5/8", "01.2.3.4/8", "1.2.3.4/32/1",
            "::1/129", "1::2::3/64", ":1/64", "1:2:3:4:5:6:7:8:9/64", "12345::/64", "g::/64", "::1.2.3/96", "fe80::1%1/64",
            "1:2:3:4:5:6:7::8/64", " 1.2.3.4/32",
        ]
    )
    func malformedRanges(_ text: String) {
        #expect(throws: CDNRefusal.self) { _ = try CloudFrontIPRange(parsing: text) }
    }
}
