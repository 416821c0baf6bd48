/// A token taken apart: typed fields, every raw field, the signature block and
/// the exact bytes it signs. Nothing here has been verified yet.
///
/// Immutable, and made only by a decoder from the bytes it was given: the
/// typed fields are always the reading of ``signedBytes``, so a verdict on a
/// `DecodedToken` is a verdict on what the signature covers (docs/DESIGN.md#the-library-api-for-servers).
/// Two are equal when they decoded the same XML the same way.
public struct DecodedToken: Sendable, Equatable {
    /// The typed token.
    public var token: EntitlementToken {
        _read { yield parts.token }
    }
    /// Every field and attribute in document order, known and unknown.
    public var fields: [TokenField] {
        _read { yield parts.fields }
    }
    /// The decoded XML of the whole token (signature block and token element).
    public var xml: [UInt8] {
        _read { yield parts.xml }
    }
    /// Where the signature block and the token element are in ``xml``.
    public var frame: TokenFrame {
        _read { yield parts.frame }
    }
    /// How the token travelled (what was undone to reach its XML).
    public var transport: TransportForm {
        _read { yield parts.transport }
    }
    /// The unsigned REST envelope the token came in, if any.
    public var envelope: RESTEnvelope? {
        _read { yield parts.envelope }
    }

    /// The Media RSS reading of `resourceID`, when it is an RSS document.
    ///
    /// Read on first use, not when the token is decoded: most verifications
    /// never look at it, and parsing the nested document costs about as much
    /// as parsing the token element itself (see `LazyMediaRSS`).
    public var mediaRSS: MediaRSSResource? {
        parts.pendingMediaRSS?.resource ?? parts.storedMediaRSS
    }

    /// The reading ``mediaRSS`` comes from: one object for consecutive tokens
    /// whose `resourceID` has the same bytes (see `TokenDecoder`).
    var mediaRSSReading: (any MediaRSSReading)? {
        parts.pendingMediaRSS
    }

    /// The warnings of decoding that are not the Media RSS reading's (see ``warnings``).
    var transportWarnings: [String] {
        parts.storedWarnings
    }

    /// Things worth telling a person that did not stop decoding (a repaired
    /// transport, a `resourceID` that looks like XML but is not Media RSS).
    public var warnings: [String] {
        guard let warning = parts.pendingWarning?.warning else { return parts.storedWarnings }
        return parts.storedWarnings + [warning]
    }

    /// Everything above, in one immutable box: a decoded token is handed from
    /// decoder to verifier to verdict (and kept twice there, as the token and
    /// as the verified token), so copying it must be one reference count, not
    /// one per string and array inside.
    private final class Box: Sendable {
        let parts: Parts
        init(_ parts: Parts) { self.parts = parts }
    }

    private struct Parts: Sendable {
        var token: EntitlementToken
        var fields: [TokenField]
        var xml: [UInt8]
        var frame: TokenFrame
        var transport: TransportForm
        var envelope: RESTEnvelope?
        var storedMediaRSS: MediaRSSResource?
        var pendingMediaRSS: (any MediaRSSReading)?
        var storedWarnings: [String]
        /// The same reading as `pendingMediaRSS`: its warning, if the document
        /// is not Media RSS, comes after the transport's warnings.
        var pendingWarning: (any MediaRSSReading)?
    }

    private let box: Box

    private var parts: Parts {
        _read { yield box.parts }
    }

    init(
        token: EntitlementToken,
        fields: [TokenField],
        xml: [UInt8],
        frame: TokenFrame,
        transport: TransportForm,
        envelope: RESTEnvelope?,
        mediaRSS: (any MediaRSSReading)?,
        warnings: [String]
    ) {
        box = Box(
            Parts(
                token: token,
                fields: fields,
                xml: xml,
                frame: frame,
                transport: transport,
                envelope: envelope,
                storedMediaRSS: nil,
                pendingMediaRSS: mediaRSS,
                storedWarnings: warnings,
                pendingWarning: mediaRSS
            )
        )
    }

    public static func == (lhs: DecodedToken, rhs: DecodedToken) -> Bool {
        lhs.box === rhs.box || (lhs.xml == rhs.xml && lhs.transport == rhs.transport && lhs.envelope == rhs.envelope)
    }

    /// Media, authentication or authorization.
    public var kind: TokenKind { token.kind }
    /// The root element name as written.
    public var root: String { token.root }

    /// The exact bytes the signature covers: the token element, `<` to `>`.
    public var signedBytes: ArraySlice<UInt8> { xml[frame.tokenElement] }

    /// The text inside `signatureInfo`, as written (Base64, possibly wrapped).
    public var signatureText: String { String(decoding: xml[frame.signatureText], as: UTF8.self) }

    /// The signature's bytes, or nil when the text is not Base64 (then the
    /// verdict is `INVALID_SIGNATURE`, not a format error).
    public var signatureBytes: [UInt8]? {
        try? Base64.decode(xml[frame.signatureText].span, whitespace: .any).bytes
    }

    /// The value of the first field at `path` (an element path relative to the root),
    /// compared byte for byte.
    public func field(_ path: String) -> String? {
        fields.first { $0.path.hasSameUTF8(as: path) }?.value
    }
}
