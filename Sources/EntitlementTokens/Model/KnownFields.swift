/// Picks a kind's known fields out of the parsed fields, strictly.
///
/// A known field that appears twice is an error (which one would be trusted?);
/// unknown fields stay in ``DecodedToken/fields`` untouched.
struct KnownFields {
    private var paths: [String]
    private var found: [TokenField?]

    init(_ fields: [TokenField], known paths: [String]) throws(TokenError) {
        self.paths = paths
        found = Array(repeating: nil, count: paths.count)
        for field in fields {
            guard let slot = paths.firstIndex(of: field.path) else { continue }
            if let first = found[slot] {
                throw TokenError(.duplicateField, stage: .model,
                                 "field '\(field.path)' appears twice (first at \(first.line):\(first.column))",
                                 at: Self.location(of: field))
            }
            found[slot] = field
        }
    }

    func optional(_ path: String) -> TokenField? {
        paths.firstIndex(of: path).flatMap { found[$0] }
    }

    func required(_ path: String, root: String) throws(TokenError) -> TokenField {
        guard let field = optional(path) else {
            throw TokenError(.missingField, stage: .model, "<\(root)> has no required field '\(path)'")
        }
        return field
    }

    func timestamp(_ path: String, root: String) throws(TokenError) -> (TokenTimestamp, TokenDateParser.Shape) {
        let field = try required(path, root: root)
        do {
            return try TokenDateParser.parse(field.value)
        } catch {
            throw TokenError(.invalidFieldValue, stage: .model, "field '\(path)': \(error)", at: Self.location(of: field))
        }
    }

    /// A fingerprint is lowercase hex of an MD5, SHA-1 or SHA-256 size; empty means none.
    func fingerprint(_ path: String) throws(TokenError) -> String? {
        guard let field = optional(path), !field.value.isEmpty else { return nil }
        let value = field.value
        guard [32, 40, 64].contains(value.utf8.count),
              value.utf8.allSatisfy({ $0.isASCIIDigit || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f")) }) else {
            throw TokenError(.invalidFieldValue, stage: .model,
                             "field '\(path)' is not a fingerprint (lowercase hex of 32, 40 or 64 digits)", at: Self.location(of: field))
        }
        return value
    }

    static func location(of field: TokenField) -> SourceLocation? {
        field.line > 0 ? SourceLocation(byteOffset: 0, line: field.line, column: field.column) : nil
    }
}
