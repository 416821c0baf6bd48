import EntitlementTokens

/// The playback routes' body (docs/DESIGN.md#the-cdn-exchange): one JSON
/// object whose members are strings named from a fixed list, each once. Read
/// in one pass of the library's strict scanner, which keeps only the values
/// asked for; no tree of the document is built, and a member the route does
/// not take stops the reading where it stands.
struct StringMembersBody: JSONEventHandler {
    /// The names a member may have.
    let allowed: [String]
    let maxStringBytes: Int
    /// The members read.
    private(set) var values = Members()
    /// Why the body is refused, once it is; the scan stops there.
    private(set) var refusal: String?
    private var insideObject = false
    private var name = ""

    /// A body's members, each name once, in the body's order. At most the
    /// four names a route takes: a list searched by name costs less than a
    /// dictionary's hashing of every name read and asked for.
    struct Members: Sendable {
        private(set) var pairs: [(name: String, value: String)] = []

        subscript(name: String) -> String? { pairs.first { $0.name == name }?.value }

        /// The members by name (for a test's comparison, a report).
        var byName: [String: String] { Dictionary(pairs, uniquingKeysWith: { first, _ in first }) }

        mutating func append(_ name: String, _ value: String) { pairs.append((name, value)) }
    }

    /// Why a body is refused, in words for the refusal's `reason`.
    struct Refusal: Error {
        var reason: String
    }

    /// Reads `bytes` (a UTF-8 byte order mark before `{` is skipped, as the
    /// library's readers skip it): the members, or why they are refused.
    static func read(_ bytes: [UInt8], allowed: [String]) -> Result<Members, Refusal> {
        let limits = JSONDocumentLimits()
        var reader = StringMembersBody(allowed: allowed, maxStringBytes: limits.maxStringBytes)
        var scanner = JSONScanner(maxDepth: 2, maxStringBytes: limits.maxStringBytes)
        let span = bytes.span
        let mark = ByteRules.startsWithByteOrderMark(span) ? ByteRules.byteOrderMarkCount : 0
        scanner.scan(span.extracting(droppingFirst: mark), with: &reader)
        let error = scanner.finish(with: &reader)
        if let refusal = reader.refusal { return .failure(Refusal(reason: refusal)) }
        if let error { return .failure(Refusal(reason: "the body is not a JSON object: \(error)")) }
        return .success(reader.values)
    }

    private mutating func refuse(_ reason: String) throws(TokenError) -> Never {
        refusal = reason
        throw TokenError(.invalidJSON, stage: .transport, reason)
    }

    mutating func valueStarts(_ kind: JSONValueKind, at position: JSONPosition) throws(TokenError) -> JSONCapture {
        guard insideObject else {
            guard case .object = kind else { try refuse("the body is not a JSON object") }
            insideObject = true
            return .keep(limit: maxStringBytes)  // for an object: report its members
        }
        guard case .string = kind else { try refuse("\(name) is not a string") }
        return .keep(limit: maxStringBytes)
    }

    mutating func keyStarts() -> Bool { true }

    mutating func key(_ bytes: [UInt8], at position: JSONPosition) throws(TokenError) {
        let name = String(decoding: bytes, as: UTF8.self)
        guard allowed.contains(name) else {
            try refuse("the body's member \(HeaderValue.encode(name)) is not one of \(allowed.joined(separator: ", "))")
        }
        guard values[name] == nil else { try refuse("the body names \(name) twice: it reads two ways") }
        self.name = name
    }

    mutating func scalar(_ kind: JSONScalar, text: [UInt8]) throws(TokenError) {
        // Only a member's string gets here: every other value was refused as it started.
        values.append(name, String(decoding: text, as: UTF8.self))
    }

    mutating func containerEnds() throws(TokenError) {}
}
