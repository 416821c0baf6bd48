import Testing

@testable import CDNTokens

/// RFC 3986 reference resolution as a player does it (docs/DESIGN.md#tokens-inside-manifests).
@Suite struct ManifestURITests {
    static let base = try! ManifestURI(parsing: "http://a/b/c/d;p?q".utf8)

    /// RFC 3986 §5.4.1 and §5.4.2, every example.
    static let examples: [(String, String)] = [
        ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
        ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q#s"),
        ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"), (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"),
        ("g;x?y#s", "http://a/b/c/g;x?y#s"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"),
        ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"),
        ("../../g", "http://a/g"),
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."),
        (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"),
        ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
        ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"),
        ("g#s/./x", "http://a/b/c/g#s/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"), ("http:g", "http:g"),
    ]

    @Test(arguments: examples)
    func resolvesAsRFC3986Says(reference: String, expected: String) throws {
        let resolved = try ManifestURI(parsing: reference.utf8).resolved(against: Self.base)
        #expect(resolved.description == expected)
    }

    @Test(arguments: ["a b.ts", "a\u{0}.ts", "a\r.ts", "caf\u{E9}.ts", "a\"b", "a<b>", "a\\b", "{$x}", "a|b", "a#b#c", ":x", "1http://a/"])
    func refusesWhatAURICannotHold(reference: String) {
        #expect(throws: ManifestError.self) { try ManifestURI(parsing: reference.utf8) }
    }

    @Test func keepsEscapesAsWritten() throws {
        let uri = try ManifestURI(parsing: "seg%2Fa%2e%2e.ts?x=%41#f".utf8).resolved(against: Self.base)
        #expect(uri.description == "http://a/b/c/seg%2Fa%2e%2e.ts?x=%41#f")
    }

    @Test func refusesAReferenceLongerThanTheBound() {
        let long = String(repeating: "a", count: ManifestURI.maximumLength + 1)
        #expect(throws: ManifestError.self) { try ManifestURI(parsing: long.utf8) }
    }
}
