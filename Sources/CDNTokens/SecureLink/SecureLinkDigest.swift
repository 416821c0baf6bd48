import EntitlementTokens

/// The one hash `secure_link_md5` knows.
enum SecureLinkDigest {
    static func md5(_ bytes: [UInt8]) throws(CDNRefusal) -> [UInt8] {
        guard let digest = ForeignDigest.md5.digest(of: bytes) else { throw .format("OpenSSL could not compute MD5") }
        return digest
    }
}
