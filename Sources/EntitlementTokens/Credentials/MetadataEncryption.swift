/// Encrypts metadata values to the programmer's public key, as an MVPD does:
/// for minting test metadata and samples (docs/DESIGN.md#user-metadata).
public struct MetadataEncryptor: Sendable {
    let key: OpenSSLKey
    public let scheme: MetadataEncryptionScheme
    /// The key's description.
    public let keyDescription: String

    /// `publicKey` must be an RSA key (from a PEM/DER public key or a certificate).
    public init(publicKey: PublicKey, scheme: MetadataEncryptionScheme = .jwe(.rsaOAEP256, .a256GCM)) throws(KeyError) {
        guard let decoded = try KeyDecoding.publicKeys(from: publicKey.derRepresentation, source: publicKey.source).first,
            decoded.key.isA("RSA")
        else {
            throw KeyError(.unsupportedKeyType, publicKey.source, "metadata values are encrypted to an RSA key")
        }
        key = decoded.key
        self.scheme = scheme
        keyDescription = publicKey.description
    }

    /// The ciphertext text of `plaintext`: a JWE compact serialization, or Base64 of the RSA ciphertext.
    public func encrypt(_ plaintext: [UInt8]) throws(KeyError) -> String {
        switch scheme {
        case .jwe(let alg, let enc):
            return try encryptJWE(plaintext, alg: alg, enc: enc)
        case .rsaPKCS1v15, .rsaOAEPSHA1, .rsaOAEPSHA256:
            switch RSAOperations.encrypt(plaintext, key: key, padding: scheme.barePadding!) {
            case .success(let ciphertext): return Base64.encode(ciphertext)
            case .failure(let failure): throw KeyError(.signingFailed, keyDescription, "cannot encrypt with \(scheme): \(failure.reason)")
            }
        }
    }

    private func encryptJWE(_ plaintext: [UInt8], alg: JWEKeyAlgorithm, enc: JWEContentEncryption) throws(KeyError) -> String {
        let header = JSONValue.object([
            JSONMember(name: "alg", value: .string(alg.rawValue)),
            JSONMember(name: "enc", value: .string(enc.rawValue)),
        ])
        let protected = Base64URL.encode(header.encoded)
        let contentKey = SystemRandom.bytes(enc.keyByteCount)
        let iv = SystemRandom.bytes(enc.ivByteCount)
        let encryptedKey: [UInt8]
        switch RSAOperations.encrypt(contentKey, key: key, padding: alg.padding) {
        case .success(let bytes): encryptedKey = bytes
        case .failure(let failure): throw KeyError(.signingFailed, keyDescription, "cannot encrypt the content key: \(failure.reason)")
        }
        let aad = Array(protected.utf8)
        let sealed =
            enc.isGCM
            ? SymmetricCrypto.gcmEncrypt(key: contentKey, iv: iv, plaintext: plaintext, aad: aad)
            : SymmetricCrypto.cbcHMACEncrypt(key: contentKey, iv: iv, plaintext: plaintext, aad: aad)
        switch sealed {
        case .success(let (ciphertext, tag)):
            return [
                protected, Base64URL.encode(encryptedKey), Base64URL.encode(iv),
                Base64URL.encode(ciphertext), Base64URL.encode(tag),
            ].joined(separator: ".")
        case .failure(let failure):
            throw KeyError(.signingFailed, keyDescription, "cannot encrypt the value: \(failure.reason)")
        }
    }
}

extension UserMetadata {
    /// Metadata made for tests and samples: `data` members in order, those named
    /// in `encrypting` encrypted with `encryptor` (a string's UTF-8, any other
    /// value's compact JSON), and the result checked by the reader's own rules.
    public static func minted(
        updated: TokenTimestamp?,
        data: [JSONMember],
        encrypting names: [String],
        with encryptor: MetadataEncryptor?,
        otherMembers: [JSONMember] = []
    ) throws -> UserMetadata {
        var members: [JSONMember] = []
        if let updated {
            let (seconds, _) = TokenTimestamp.floorDivide(updated.millisecondsSince1970, 1000)
            members.append(JSONMember(name: "updated", value: .number(String(seconds))))
        }
        if !names.isEmpty {
            members.append(JSONMember(name: "encrypted", value: .array(names.map { .string($0) })))
        }
        var dataMembers: [JSONMember] = []
        for member in data {
            guard names.contains(member.name) else {
                dataMembers.append(member)
                continue
            }
            guard let encryptor else {
                throw KeyError(.noKeysFound, "metadata", "'\(member.name)' is to be encrypted, and no key was given")
            }
            let plaintext: [UInt8] = if case .string(let text) = member.value { Array(text.utf8) } else { member.value.encoded }
            dataMembers.append(JSONMember(name: member.name, value: .string(try encryptor.encrypt(plaintext))))
        }
        members.append(JSONMember(name: "data", value: .object(dataMembers)))
        members += otherMembers
        return try UserMetadata(.object(members))
    }
}
