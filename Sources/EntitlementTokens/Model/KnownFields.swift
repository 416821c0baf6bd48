/// Picks a kind's known fields out of the parsed fields, strictly.
///
/// A known field that appears twice is an error (which one would be trusted?);
/// unknown fields stay in ``DecodedToken/fields`` untouched.
///
/// Known fields are asked for by their position in the kind's list of known
/// paths (a slot), not by path: the fields are matched to slots once, in one
/// pass, and a slot is a vector lane, so picking them out allocates nothing,
/// searches nothing and copies no field (only the strings kept are retained).
struct KnownFields {
    private let paths: [String]
    private let fields: [TokenField]
    /// For each known path (slot), the index of its field in `fields`, or -1.
    private var found = SIMD8<Int>(repeating: -1)

    static let capacity = SIMD8<Int>.scalarCount

    init(_ fields: [TokenField], known paths: [String]) throws(TokenError) {
        precondition(paths.count <= Self.capacity, "more known paths than KnownFields holds")
        self.paths = paths
        self.fields = fields
        // Tokens are mostly written with their known fields in the order of
        // `paths`: the slot after the last one found is tried first.
        var next = 0
        for index in fields.indices {
            guard let slot = Self.slot(of: fields[index].path, in: paths, tryingFirst: next) else { continue }
            next = slot + 1
            if found[slot] >= 0 {
                let first = fields[found[slot]]
                let field = fields[index]
                throw TokenError(
                    .duplicateField,
                    stage: .model,
                    "field '\(field.path)' appears twice (first at \(first.line):\(first.column))",
                    at: Self.location(of: field)
                )
            }
            found[slot] = index
        }
    }

    /// `paths.firstIndex(of: path)`, trying `likely` first and comparing lengths first: known paths are
    /// short strings, and most comparisons are between different lengths.
    /// Byte-exact, as docs/DESIGN.md#ids-are-compared-byte-for-byte wants: known paths are ASCII, and a string
    /// canonically equivalent to an ASCII one without being it (`\u{212A}` for
    /// `K`) is longer in UTF-8, so equal length and `==` mean equal bytes.
    @inline(__always)
    private static func slot(of path: String, in paths: [String], tryingFirst likely: Int) -> Int? {
        let length = path.utf8.count
        if likely < paths.count, paths[likely].utf8.count == length, paths[likely] == path { return likely }
        for slot in paths.indices where paths[slot].utf8.count == length && paths[slot] == path {
            return slot
        }
        return nil
    }

    /// The value of the field in `slot`, if the token has it.
    func value(_ slot: Int) -> String? {
        let index = found[slot]
        return index >= 0 ? fields[index].value : nil
    }

    /// The field in `slot`, if the token has it.
    func optional(_ slot: Int) -> TokenField? {
        let index = found[slot]
        return index >= 0 ? fields[index] : nil
    }

    func required(_ slot: Int, root: String) throws(TokenError) -> TokenField {
        guard let field = optional(slot) else { throw missing(slot, root: root) }
        return field
    }

    func requiredValue(_ slot: Int, root: String) throws(TokenError) -> String {
        guard let value = value(slot) else { throw missing(slot, root: root) }
        return value
    }

    private func missing(_ slot: Int, root: String) -> TokenError {
        TokenError(.missingField, stage: .model, "<\(root)> has no required field '\(paths[slot])'")
    }

    func timestamp(_ slot: Int, root: String) throws(TokenError) -> (TokenTimestamp, TokenDateParser.Shape) {
        let index = found[slot]
        guard index >= 0 else { throw missing(slot, root: root) }
        do {
            return try TokenDateParser.parse(fields[index].value)
        } catch {
            throw TokenError(.invalidFieldValue, stage: .model, "field '\(paths[slot])': \(error)", at: Self.location(of: fields[index]))
        }
    }

    /// A fingerprint is lowercase hex of an MD5, SHA-1 or SHA-256 size; empty means none.
    func fingerprint(_ slot: Int) throws(TokenError) -> String? {
        guard let field = optional(slot), !field.value.isEmpty else { return nil }
        let value = field.value
        guard [32, 40, 64].contains(value.utf8.count),
            value.utf8.allSatisfy({ $0.isASCIIDigit || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f")) })
        else {
            throw TokenError(
                .invalidFieldValue,
                stage: .model,
                "field '\(paths[slot])' is not a fingerprint (lowercase hex of 32, 40 or 64 digits)",
                at: Self.location(of: field)
            )
        }
        return value
    }

    static func location(of field: TokenField) -> SourceLocation? {
        field.line > 0 ? SourceLocation(byteOffset: 0, line: field.line, column: field.column) : nil
    }
}
