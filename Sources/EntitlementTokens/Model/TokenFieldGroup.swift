/// The values of one field path, for front ends that show each path once
/// (the `fields` object of docs/DESIGN.md#output-forms): a list, or an unknown repeated element,
/// maps to all of its values in document order.
///
/// Paths are grouped by their bytes (`Café` composed and decomposed are two
/// paths, as they are two element names), and in time linear in the number of
/// fields: a token may carry hundreds of attributes (docs/DESIGN.md#limits-of-the-decoder), and pairwise
/// comparison made rendering one such token cost milliseconds.
public struct TokenFieldGroup: Sendable, Hashable {
    /// The path, relative to the root (`simpleTokenDeviceID/simpleTokenFingerprint`).
    public var path: String
    /// Its values in document order.
    public var values: [String]

    /// Below this many fields, pairwise comparison is cheaper than hashing each path.
    private static let pairwiseLimit = 16

    /// Whether two of `fields` share a path.
    public static func hasRepeatedPath(_ fields: [TokenField]) -> Bool {
        if fields.count <= pairwiseLimit {
            for later in fields.indices.dropFirst() {
                for earlier in 0..<later where fields[earlier].path.hasSameUTF8(as: fields[later].path) {
                    return true
                }
            }
            return false
        }
        var seen = Set<UTF8Key>(minimumCapacity: fields.count)
        for index in fields.indices where !seen.insert(UTF8Key(fields[index].path)).inserted {
            return true
        }
        return false
    }

    /// Each path once, in the order paths first occur, with its values in document order.
    public static func grouping(_ fields: [TokenField]) -> [TokenFieldGroup] {
        var groups: [TokenFieldGroup] = []
        var groupOfPath = [UTF8Key: Int](minimumCapacity: fields.count)
        for field in fields {
            if let index = groupOfPath[UTF8Key(field.path)] {
                groups[index].values.append(field.value)
            } else {
                groupOfPath[UTF8Key(field.path)] = groups.count
                groups.append(TokenFieldGroup(path: field.path, values: [field.value]))
            }
        }
        return groups
    }
}
