/// Names that may only appear once per token, at the top level.
enum ReservedName {
    static let signatureInfo = Array("signatureInfo".utf8)

    static func isTokenRoot(_ name: Span<UInt8>) -> Bool {
        // Most names (every field of every token) are none of these lengths.
        switch name.count {
        case 9: return equal("authToken", name)
        case 23: return equal("shortAuthorizationToken", name)
        case 24: return equal("simpleAuthorizationToken", name)
        case 25: return equal("simpleAuthenticationToken", name)
        default: return false
        }
    }

    @inline(__always)
    static func isSignatureInfo(_ name: Span<UInt8>) -> Bool {
        name.count == 13 && equal("signatureInfo", name)
    }

    /// `name` is `reserved` byte for byte; the caller has compared the lengths
    /// (nearly every name differs in length from the reserved ones).
    @inline(__always)
    private static func equal(_ reserved: String, _ name: Span<UInt8>) -> Bool {
        var index = 0
        for byte in reserved.utf8 {
            guard index < name.count, name[index] == byte else { return false }
            index += 1
        }
        return index == name.count
    }
}
