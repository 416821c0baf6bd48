import CDNTokens
import Testing

/// Checks a refusal by its status and the words its reason must name (the
/// field, the ACL, the URL): equality on `CDNRefusal` would tie the tests to
/// every word of a sentence. Shared by the Akamai and secure_link tests.
enum RefusalExpectation {
    static func expect(
        _ status: CDNStatus,
        naming words: String...,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> Void
    ) {
        do {
            try body()
            Issue.record("expected \(status.rawValue), nothing was thrown", sourceLocation: sourceLocation)
        } catch let refusal as CDNRefusal {
            #expect(refusal.status == status, "\(refusal)", sourceLocation: sourceLocation)
            for word in words {
                #expect(refusal.reason.contains(word), "'\(refusal.reason)' does not name '\(word)'", sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("expected a CDNRefusal, got \(error)", sourceLocation: sourceLocation)
        }
    }
}
