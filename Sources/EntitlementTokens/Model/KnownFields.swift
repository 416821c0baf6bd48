/// Picks a kind's known fields out of the parsed fields, strictly.
///
/// A known field that appears twice is an error (which one would be trusted?);
/// unknown fields stay in ``DecodedToken/fields`` untouched.
struct KnownFields {
    private var paths: [String]
    private var fields: [TokenField]
    /// For each known path, the index of its field in `fields`, or -1.
    /// (An array of `Int` rather than of `TokenField?`: it is made per token,
    /// and the runtime makes `[Int]` storage far more cheaply.)
    private var found: [Int]

    init(_ fields: [TokenField], known paths: [String]) throws(TokenError) {
        self.paths = paths
        self.fields = fields
        found = Array(repeating: -1, count: paths.count)
        for (index, field) in fields.enumerated() {
            guard let slot = Self.slot(of: field.path, in: paths) else { continue }
            if found[slot] >= 0 {
                let first = fields[found[slot]]
                throw TokenError(.duplicateField, stage: .model,
                                 "field '\(field.path)' appears twice (first at \(first.line):\(first.column))",
                                 at: Self.location(of: field))
            }
            found[slot] = index
        }
    }

    /// `paths.firstIndex(of: path)`, comparing lengths first: known paths are
    /// short strings, and most comparisons are between different lengths.
    private static func slot(of path: String, in paths: [String]) -> Int? {
        let length = path.utf8.count
        return paths.firstIndex { $0.utf8.count == length && $0 == path }
    }

    func optional(_ path: String) -> TokenField? {
        guard let slot = Self.slot(of: path, in: paths), found[slot] >= 0 else { return nil }
        return fields[found[slot]]
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
