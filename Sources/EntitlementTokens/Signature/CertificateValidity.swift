/// The validity dates of the certificate a trusted key was loaded from.
///
/// Shown and warned about, never enforced: a certificate is only a container
/// for its key here, not a PKI (docs/DESIGN.md#signatures-and-keys). An operator trusts a key by
/// configuring it; an expired certificate still yields its key, and
/// ``KeyRing/load(paths:options:now:)`` adds a ``KeyLoadNotice`` saying so.
public struct CertificateValidity: Sendable, Hashable {
    /// The certificate's `notBefore`.
    public var notBefore: TokenTimestamp
    /// The certificate's `notAfter`.
    public var notAfter: TokenTimestamp

    /// Dates as read from a certificate.
    public init(notBefore: TokenTimestamp, notAfter: TokenTimestamp) {
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// True when `instant` lies within the dates, both ends included (RFC 5280 §4.1.2.5).
    public func contains(_ instant: TokenTimestamp) -> Bool {
        notBefore <= instant && instant <= notAfter
    }
}
