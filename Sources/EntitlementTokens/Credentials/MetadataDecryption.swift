/// One encrypted metadata value and what became of it: shown beside its
/// ciphertext (docs/DESIGN.md#user-metadata), decrypted or with the reason it did not decrypt.
public struct DecryptedMetadataValue: Sendable, Hashable {
    /// The `data` member's name.
    public let name: String
    /// The ciphertext as written.
    public let ciphertext: String
    /// The plain value and the scheme that opened it, or why none did.
    public let outcome: Outcome

    public enum Outcome: Sendable, Hashable {
        case decrypted(plaintext: [UInt8], scheme: MetadataEncryptionScheme)
        case failed(reason: String)
    }

    /// The plain value as text, when it decrypted to UTF-8 (escape before a terminal).
    public var plaintext: String? {
        guard case .decrypted(let bytes, _) = outcome else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// Decrypts user metadata values with the programmer's private key.
///
/// A local operation of the CLI and the library only: the gate never decrypts
/// on a network request (each failure here says why, which over a network
/// would be a padding oracle), and the debugger takes no private key.
public struct MetadataDecryptor: Sendable {
    public let key: ProgrammerPrivateKey
    /// Largest ciphertext text accepted, as written (a JWE of a big value).
    public var maxCiphertextBytes = 256 * 1024

    public init(key: ProgrammerPrivateKey) {
        self.key = key
    }

    /// Every encrypted member of `metadata`, in document order; one that does not
    /// decrypt is given with its reason and the others still are.
    public func decrypt(_ metadata: UserMetadata) -> [DecryptedMetadataValue] {
        metadata.data.compactMap { member in
            guard case .encrypted(let ciphertext) = member.value else { return nil }
            return DecryptedMetadataValue(name: member.name, ciphertext: ciphertext, outcome: decrypt(ciphertext: ciphertext))
        }
    }

    /// One value: a JWE compact serialization (five dot-separated parts), or bare
    /// Base64 of an RSA ciphertext (tried with OAEP-SHA-256, OAEP-SHA-1, then PKCS#1 v1.5).
    public func decrypt(ciphertext: String) -> DecryptedMetadataValue.Outcome {
        let text = Array(ciphertext.utf8)
        guard text.count <= maxCiphertextBytes else {
            return .failed(reason: "the ciphertext is \(text.count) bytes, more than \(maxCiphertextBytes)")
        }
        let dots = text.count { $0 == UInt8(ascii: ".") }
        if dots == 4 { return decryptJWE(text) }
        if dots > 0 {
            return .failed(reason: "neither a JWE compact serialization (five parts, \(dots + 1) found) nor Base64 of an RSA ciphertext")
        }
        let bytes: [UInt8]
        do {
            bytes = try Base64.decode(text, whitespace: .lineBreaks).bytes
        } catch {
            return .failed(reason: "neither a JWE compact serialization nor Base64 of an RSA ciphertext (not Base64 at byte \(error.offset))")
        }
        guard bytes.count == key.key.maximumSignatureSize else {
            return .failed(
                reason:
                    "Base64 of \(bytes.count) bytes; a ciphertext for this RSA-\(key.bits) key is \(key.key.maximumSignatureSize) (encrypted to another key?)"
            )
        }
        var reasons: [String] = []
        for scheme in MetadataEncryptionScheme.bareTrialOrder {
            switch RSAOperations.decrypt(bytes, key: key.key, padding: scheme.barePadding!) {
            case .success(let plaintext): return .decrypted(plaintext: plaintext, scheme: scheme)
            case .failure(let failure): reasons.append("\(scheme): \(failure.reason)")
            }
        }
        return .failed(
            reason: "no RSA padding opens it with \(key.description) (\(reasons.joined(separator: "; "))): encrypted to another key, or altered"
        )
    }

    private func decryptJWE(_ text: [UInt8]) -> DecryptedMetadataValue.Outcome {
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        let names = ["protected header", "encrypted key", "initialization vector", "ciphertext", "authentication tag"]
        var decoded: [[UInt8]] = []
        for (index, part) in parts.enumerated() {
            guard let bytes = Base64URL.decode(part) else {
                return .failed(reason: "JWE \(names[index]) is not canonical unpadded Base64url")
            }
            decoded.append(bytes)
        }
        let header: JSONValue
        do {
            header = try JSONValue.readObject(decoded[0])
        } catch {
            return .failed(reason: "JWE protected header: \(error.message)")
        }
        guard case .string(let algName) = header["alg"] ?? .null, let alg = JWEKeyAlgorithm(rawValue: algName) else {
            return .failed(reason: "JWE 'alg' \(header["alg"].map { "\($0)" } ?? "is missing"); allowed: RSA1_5, RSA-OAEP, RSA-OAEP-256")
        }
        guard case .string(let encName) = header["enc"] ?? .null, let enc = JWEContentEncryption(rawValue: encName) else {
            return .failed(
                reason: "JWE 'enc' \(header["enc"].map { "\($0)" } ?? "is missing"); allowed: A128CBC-HS256, A256CBC-HS512, A128GCM, A256GCM"
            )
        }
        if header["zip"] != nil { return .failed(reason: "JWE 'zip' (compressed content) is not supported") }
        if header["crit"] != nil { return .failed(reason: "JWE 'crit' names extensions this reader does not implement") }
        let scheme = MetadataEncryptionScheme.jwe(alg, enc)
        let contentKey: [UInt8]
        switch RSAOperations.decrypt(decoded[1], key: key.key, padding: alg.padding) {
        case .success(let bytes): contentKey = bytes
        case .failure(let failure):
            return .failed(reason: "\(scheme): the encrypted key does not open with \(key.description): \(failure.reason)")
        }
        guard contentKey.count == enc.keyByteCount else {
            return .failed(reason: "\(scheme): the content key is \(contentKey.count) bytes; \(enc.rawValue) takes \(enc.keyByteCount)")
        }
        let aad = Array(parts[0])
        let result =
            enc.isGCM
            ? SymmetricCrypto.gcmDecrypt(key: contentKey, iv: decoded[2], ciphertext: decoded[3], tag: decoded[4], aad: aad)
            : SymmetricCrypto.cbcHMACDecrypt(key: contentKey, iv: decoded[2], ciphertext: decoded[3], tag: decoded[4], aad: aad)
        switch result {
        case .success(let plaintext): return .decrypted(plaintext: plaintext, scheme: scheme)
        case .failure(let failure): return .failed(reason: "\(scheme): \(failure.reason)")
        }
    }
}
