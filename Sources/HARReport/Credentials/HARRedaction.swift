import EntitlementTokens

/// The one spelling of a replaced credential, wherever one is shown or written
/// (the report's URLs, `--redact`): `REDACTED-<kind>-<first 8 hex of the SHA-256
/// of the value as it appears in the HAR>`. The same value gets the same marker
/// everywhere, so correlations survive and nothing that could play does.
package enum HARRedaction {
    package static func marker(kind: String, value: String) -> String {
        "REDACTED-\(kind)-" + String(ByteRules.lowercaseHex(SHA256Hasher.hash(Array(value.utf8)).bytes).prefix(8))
    }

    /// `text` with every value of `credentials` replaced by its marker, longest
    /// first (a value inside another is replaced as part of the longer one).
    /// Values under 4 bytes are left: they identify nothing and would match everywhere.
    package static func replacing(_ credentials: [(kind: String, value: String)], in text: String) -> String {
        var result = text
        for credential in credentials.sorted(by: { $0.value.utf8.count > $1.value.utf8.count }) where credential.value.utf8.count >= 4 {
            guard result.contains(credential.value) else { continue }
            result = result.replacing(credential.value, with: marker(kind: credential.kind, value: credential.value))
        }
        return result
    }
}
