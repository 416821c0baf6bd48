/// A token taken apart: typed fields, every raw field, the signature block and
/// the exact bytes it signs. Nothing here has been verified yet.
public struct DecodedToken: Sendable {
    public var token: EntitlementToken
    /// Every field and attribute in document order, known and unknown.
    public var fields: [TokenField]
    /// The decoded XML of the whole token (signature block and token element).
    public var xml: [UInt8]
    public var frame: TokenFrame
    public var transport: TransportForm
    /// The unsigned REST envelope the token came in, if any.
    public var envelope: RESTEnvelope?
    /// The Media RSS reading of `resourceID`, when it is an RSS document.
    public var mediaRSS: MediaRSSResource?
    /// Things worth telling a person that did not stop decoding (a repaired
    /// transport, a `resourceID` that looks like XML but is not Media RSS).
    public var warnings: [String]

    public var kind: TokenKind { token.kind }
    public var root: String { token.root }

    /// The exact bytes the signature covers: the token element, `<` to `>`.
    public var signedBytes: ArraySlice<UInt8> { xml[frame.tokenElement] }

    /// The text inside `signatureInfo`, as written (Base64, possibly wrapped).
    public var signatureText: String { String(decoding: xml[frame.signatureText], as: UTF8.self) }

    /// The value of the first field at `path` (an element path relative to the root).
    public func field(_ path: String) -> String? {
        fields.first { $0.path == path }?.value
    }
}
