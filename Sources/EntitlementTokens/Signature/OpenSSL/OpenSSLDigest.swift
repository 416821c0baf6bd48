internal import COpenSSL

/// One-shot digests (`EVP_Digest`) for what is not the verify path: a device
/// id's fingerprint, a token's replay identity.
enum OpenSSLDigest {
    enum Algorithm {
        case sha256, sha1, md5
    }

    /// The digest of `message`, or nil if OpenSSL fails (allocation failure).
    static func digest(of message: Span<UInt8>, with algorithm: Algorithm) -> [UInt8]? {
        let method: OpaquePointer? =
            switch algorithm {
            case .sha256: EVP_sha256()
            case .sha1: EVP_sha1()
            case .md5: EVP_md5()
            }
        guard let method else { return nil }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = message.withUnsafeBufferPointer { input in
            EVP_Digest(input.baseAddress, input.count, &output, &length, method, nil)
        }
        guard ok == 1 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return Array(output[0..<Int(length)])
    }
}
