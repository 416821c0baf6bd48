import Testing
import TokenTestSupport

@testable import CDNTokens

/// ACL matching: `*` spans any bytes, both sides percent-decoded, `%2a` a
/// literal star, and no backtracking blow-up.
@Suite struct EdgeAuthACLTests {
    @Test(
        "patterns and paths",
        arguments: [
            ("/hls/tnt/*", "/hls/tnt/a.ts", true), ("/hls/tnt/*", "/hls/tnt/", true), ("/hls/tnt/*", "/hls/tnt/x/y/z.ts", true),
            ("/hls/tnt/*", "/hls/tnt", false), ("/hls/tnt/*", "/hls/tnt2/a.ts", false), ("/*", "/", true),
            ("%2f*", "/anything", true), ("%2fhls%2ftnt%2f*", "/hls/tnt/a.ts", true), ("/hls/tnt/*", "%2fhls%2ftnt%2fa.ts", true),
            ("/a%20b/*", "/a b/c", true), ("/a b/*", "/a%20b/c", true),
            ("/a/%2a", "/a/*", true), ("/a/%2a", "/a/b", false), ("/a/*", "/a/%2a", true),
            ("*", "", true), ("**", "/x", true), ("/a*b*c", "/abc", true), ("/a*b*c", "/axxbyyc", true), ("/a*b*c", "/acb", false),
            ("/a*a", "/a", false), ("/a*a", "/aa", true), ("*.m3u8", "/x/y.m3u8", true), ("*.m3u8", "/x/y.m3u8.ts", false),
            ("/exact", "/exact", true), ("/exact", "/exactly", false), ("/a*aab*", "/aaaab", true), ("/x*abab*y", "/xabaabababy", true),
            ("/a%zz", "/a%zz", true),
        ] as [(String, String, Bool)]
    )
    func matching(_ pattern: String, _ path: String, _ covered: Bool) throws {
        if pattern == "/a%zz" {
            // A malformed escape cannot be an ACL; a path keeps one as written.
            RefusalExpectation.expect(.invalidTokenFormat, naming: "/a%zz") { _ = try EdgeAuthACL(pattern) }
            #expect(EdgeAuthACL.matches([Array("/a%zz".utf8)], URLEscaping.percentDecoded("/a%zz".utf8)))
            return
        }
        #expect(try EdgeAuthACL(pattern).covers(path: path) == covered)
        #expect(EdgeAuthACL.matches(try EdgeAuthACL(pattern).pieces, URLEscaping.percentDecoded(path.utf8)) == Self.reference(pattern, path))
    }

    @Test("agrees with a plain dynamic-programming matcher on generated patterns")
    func agreesWithReference() throws {
        var generator = SeededGenerator(seed: 7)
        let alphabet: [Character] = ["a", "b", "*", "/"]
        for _ in 0..<2000 {
            let pattern = String((0..<Int(generator.next() % 9 + 1)).map { _ in alphabet[Int(generator.next() % 4)] })
            let path = String((0..<Int(generator.next() % 12)).map { _ in alphabet.filter { $0 != "*" }[Int(generator.next() % 3)] })
            #expect(try EdgeAuthACL(pattern).covers(path: path) == Self.reference(pattern, path), "\(pattern) vs \(path)")
        }
    }

    @Test("a pattern of many stars against a long path costs linear time")
    func noBacktracking() throws {
        let pattern = String(repeating: "*a", count: 1000) + "*b"
        let path = "/" + String(repeating: "a", count: 3000)
        let clock = ContinuousClock()
        let stars = try EdgeAuthACL(pattern)
        let elapsed = clock.measure { #expect(stars.covers(path: path) == false) }
        #expect(elapsed < .milliseconds(200))
        let needle = String(repeating: "a", count: 1000) + "b"
        let long = try EdgeAuthACL("*" + needle + "*x")
        let elapsedKMP = clock.measure { #expect(long.covers(path: String(repeating: "a", count: 3000) + "x") == false) }
        #expect(elapsedKMP < .milliseconds(200))
    }

    /// The textbook O(n·m) table, on decoded bytes: the reference the fast matcher must agree with.
    static func reference(_ pattern: String, _ path: String) -> Bool {
        let p = Array(pattern.utf8)
        let s = URLEscaping.percentDecoded(path.utf8)
        if p.contains(UInt8(ascii: "%")) { return (try? EdgeAuthACL(pattern).covers(path: path)) ?? false }
        var table = [[Bool]](repeating: [Bool](repeating: false, count: s.count + 1), count: p.count + 1)
        table[0][0] = true
        for i in 1...max(p.count, 1) where i <= p.count {
            for j in 0...s.count {
                if p[i - 1] == UInt8(ascii: "*") {
                    table[i][j] = table[i - 1][j] || (j > 0 && table[i][j - 1])
                } else {
                    table[i][j] = j > 0 && table[i - 1][j - 1] && p[i - 1] == s[j - 1]
                }
            }
        }
        return table[p.count][s.count]
    }
}
