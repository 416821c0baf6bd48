/// The SHA-256 fingerprints of every key shipped in `Samples/keys` and
/// `Samples/cdn`. Their private halves are in the repository, so anyone can
/// mint a token they verify: the gate warns at start-up when it trusts one,
/// and `tokeninspect` warns when it verifies (or decrypts) with one found
/// outside the samples folder (docs/DESIGN.md#sample-keys). Tests check
/// these against the files.
package enum SampleKeys {
    package static let fingerprints: [String: String] = [
        "230f039cac1043feab430f7ea0b9311a6c86d4a174660d9d7f1d09940f2852ec": "test-ed25519",
        "90c55f2474d1e9d9b527b1c55877428b3000a97f375a7d52563bb00e8b71f015": "test-p256",
        "3d3c2d2ea73dc48b1f9f2cd6913c0b40031812aa409692b5bfd2c1960521afa7": "test-rsa1024",
        "1cdfb59abdf173f9524bb6c882b46b1beda967c98f8b79242af36aa027cdb5e0": "test-rsa2048",
        "37bbc738979a66888c2f3bbe89307661c4c3dc93475d8f217b84e33ec458a0cc": "test-rsa3072",
        "d0046f702c226d19ff8c0041098e8e5a71459048a5a48859dfd3683bda53400a": "test-untrusted-rsa2048",
    ]

    /// The CDN sample keys of `Samples/cdn`: a PEM key by the fingerprint of
    /// its public half (as ``fingerprints``), an HMAC key or a secure_link
    /// secret by the SHA-256 of the secret as it is read
    /// (``SecretFileBytes/secret(of:)``: the file, its final newline aside).
    package static let cdnFingerprints: [String: String] = [
        "f7e547f75ec57cc7302e2173346ba727414d5ae78d26ecaea9b435e0cf81586e": "test-only-cloudfront-rsa2048",
        "23f8b01f6f19a245c486980e2baf540250c3a23e6f8c4be99fefada91038aa34": "test-only-akamai",
        "331ab04caa328927f706627b812f4139f9ec42a6d61f17e468a70c41a48d8f67": "test-only-cat-hmac",
        "9721ca407d0615f375f93cf5994698ba6fde4741841649622b237da88df6fa09": "test-only-secure-link",
    ]

    /// The sample key `key` is, by name, or nil when it is not one of them.
    package static func name(of key: PublicKey) -> String? { name(ofFingerprint: key.sha256Fingerprint) }

    /// The sample key whose fingerprint (SubjectPublicKeyInfo, or a CDN
    /// secret as read) is `fingerprint`, by name.
    package static func name(ofFingerprint fingerprint: String) -> String? {
        fingerprints[fingerprint] ?? cdnFingerprints[fingerprint]
    }

    /// The sample key a key file holds, by name: the file's secret
    /// (an HMAC key, a secure_link secret) or the public half of the PEM key
    /// in it. For CDN keys, read as each kind needs them.
    package static func name(ofKeyFile bytes: [UInt8]) -> String? {
        if let digest = OpenSSLSHA256.shared.hexDigest(of: SecretFileBytes.secret(of: bytes)),
            let name = cdnFingerprints[digest]
        {
            return name
        }
        let any = KeyLoadingOptions(allowsInsecureKeySizes: true)
        if let key = try? SigningKey(bytes: bytes, source: "", options: any).publicKey { return name(of: key) }
        return (try? PublicKey.keys(from: bytes, source: "", options: any))?.lazy.compactMap { name(of: $0) }.first
    }
}
