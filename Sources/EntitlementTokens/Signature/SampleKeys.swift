/// The SHA-256 fingerprints (of the DER SubjectPublicKeyInfo, as
/// ``PublicKey/sha256Fingerprint``) of every key pair shipped in
/// `Samples/keys`. Their private halves are in the repository, so anyone can
/// mint a token they verify: the gate warns at start-up when it trusts one,
/// and `tokeninspect` warns when it verifies with one found outside the
/// samples folder (docs/DESIGN.md#sample-keys). A test checks these against the files.
package enum SampleKeys {
    package static let fingerprints: [String: String] = [
        "230f039cac1043feab430f7ea0b9311a6c86d4a174660d9d7f1d09940f2852ec": "test-ed25519",
        "90c55f2474d1e9d9b527b1c55877428b3000a97f375a7d52563bb00e8b71f015": "test-p256",
        "3d3c2d2ea73dc48b1f9f2cd6913c0b40031812aa409692b5bfd2c1960521afa7": "test-rsa1024",
        "1cdfb59abdf173f9524bb6c882b46b1beda967c98f8b79242af36aa027cdb5e0": "test-rsa2048",
        "37bbc738979a66888c2f3bbe89307661c4c3dc93475d8f217b84e33ec458a0cc": "test-rsa3072",
        "d0046f702c226d19ff8c0041098e8e5a71459048a5a48859dfd3683bda53400a": "test-untrusted-rsa2048",
    ]

    /// The sample key `key` is, by name, or nil when it is not one of them.
    package static func name(of key: PublicKey) -> String? { fingerprints[key.sha256Fingerprint] }
}
