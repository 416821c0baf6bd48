internal import COpenSSL

/// Whether an X.509 certificate names a host, by OpenSSL's own RFC 6125
/// matcher (`X509_check_host`): the subjectAltName DNS entries, or the
/// subject's common name when the certificate has none; wildcards only as a
/// whole left-most label. An IP address entry never names a host.
///
/// The Redis client's `tls-server-name=` (docs/DESIGN.md#trust-in-sentinels) needs exactly
/// this: SwiftNIO SSL, given a name, also accepts a certificate whose IP
/// address entry equals the address dialled, so a node holding the CA's
/// certificate for another name at that address would pass.
package enum CertificateNames {
    /// True when `certificateDER` (one DER certificate, nothing after it) names `hostname`.
    package static func names(_ hostname: String, certificateDER: [UInt8]) -> Bool {
        guard !hostname.isEmpty, !hostname.utf8.contains(0),
            let certificate = KeyDecoding.decodeWhole(certificateDER, free: { X509_free($0) }, { d2i_X509(nil, &$0, $1) })
        else { return false }
        defer { X509_free(certificate) }
        let length = hostname.utf8.count
        let matched = hostname.withCString { name in
            X509_check_host(certificate, name, length, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS), nil)
        }
        OpenSSLErrorQueue.clear()
        return matched == 1
    }
}
