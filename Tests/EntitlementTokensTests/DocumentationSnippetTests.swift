import Foundation
import Testing

/// The library snippets of docs/LIBRARY.md and the DocC article are compiled as
/// written: each stands verbatim in Examples/ServerVerification, which
/// `.ci/run` builds. A snippet edited in one place and not the other fails here.
@Suite struct DocumentationSnippetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// `// snippet: NAME` … `// end snippet` blocks of the example's source.
    static func snippets() throws -> [String: String] {
        let source = try text("Examples/ServerVerification/Sources/ServerVerification/main.swift")
        var result: [String: String] = [:]
        var name: String?
        var body = ""
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("// snippet: ") {
                name = String(line.dropFirst("// snippet: ".count))
                body = ""
            } else if line == "// end snippet", let current = name {
                result[current] = body
                name = nil
            } else if name != nil {
                body += line + "\n"
            }
        }
        return result
    }

    @Test func everySnippetStandsInTheDocsAsCompiled() throws {
        let snippets = try Self.snippets()
        #expect(snippets.count == 4)
        let guide = try Self.text("docs/LIBRARY.md")
        let article = try Self.text("Sources/EntitlementTokens/Docs.docc/VerifyingOnYourServer.md")
        for (name, body) in snippets {
            #expect(article.contains("```swift\n" + body + "```"), "DocC article lacks snippet \(name) as compiled")
            if name == "library-guide" {
                #expect(guide.contains(body + "```"), "docs/LIBRARY.md lacks the library snippet as compiled")
            }
        }
    }
}
