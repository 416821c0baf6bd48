import EntitlementTokens

/// FuzzMetadata: user metadata and signed requestor IDs (docs/DESIGN.md#hostile-credentials).
///
/// - **Decode, re-encode, decode is stable**: metadata that decodes (in any pasted
///   form) encodes to JSON that decodes to an equal value, and encoding that
///   gives the same text again.
/// - Errors are typed: the readers throw only ``TokenError`` (the compiler checks
///   it), and nothing traps.
/// - Every encrypted value goes through the decryptor with the samples' key: a
///   fuzzer's ciphertext is refused with a reason, never a crash; one that is a
///   real ciphertext of that key is impossible to hit by chance.
/// - A signed requestor ID that decodes keeps its bytes through its own Base64.
public final class MetadataOracle {
    public static let target = "FuzzMetadata"
    let decryptor: MetadataDecryptor

    /// `keyPath`: Samples/keys/test-rsa2048.pem.
    public init(keyPath: String) {
        guard let key = try? ProgrammerPrivateKey(path: keyPath) else { setupFailure("cannot load \(keyPath)") }
        decryptor = MetadataDecryptor(key: key)
    }

    public func check(_ input: [UInt8]) {
        if let metadata = try? UserMetadata(pasted: input) {
            let text = metadata.jsonText
            guard let again = try? UserMetadata(json: Array(text.utf8)) else {
                oracleFailure(Self.target, "the encoding does not decode: \(text)")
            }
            if again != metadata { oracleFailure(Self.target, "decode → encode → decode changed the value: \(text)") }
            if again.jsonText != text { oracleFailure(Self.target, "the encoding is not stable: \(text) then \(again.jsonText)") }
            for value in decryptor.decrypt(metadata) {
                if case .failed(let reason) = value.outcome, reason.isEmpty {
                    oracleFailure(Self.target, "a value that does not decrypt has no reason")
                }
            }
        }
        if let id = try? SignedRequestorID(base64: input) {
            guard let again = try? SignedRequestorID(base64: Array(id.base64.utf8)), again.signature == id.signature else {
                oracleFailure(Self.target, "a signed requestor ID's Base64 does not decode to its bytes")
            }
        }
    }
}
