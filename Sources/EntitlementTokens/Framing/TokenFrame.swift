/// The two parts of a token, located in its decoded XML.
///
/// The signature is verified over ``tokenElement`` exactly as these bytes
/// stand — from the `<` of the token's start tag to the `>` of its end tag —
/// with no canonicalization (see docs/FORMAT.md, "The signed bytes").
public struct TokenFrame: Sendable, Hashable {
    /// How the signature block was written.
    public enum SignatureForm: String, Sendable, Hashable {
        /// `<signatureInfo>…<signatureInfo>`: what real servers and the vendor's docs emit.
        case legacy
        /// `<signatureInfo>…</signatureInfo>`
        case closed
    }

    /// Where the signature block stood relative to the token element.
    public enum SignaturePlacement: String, Sendable, Hashable {
        case beforeToken, afterToken
    }

    /// Byte range of the Base64 text inside `signatureInfo`.
    public var signatureText: Range<Int>
    /// Legacy (unclosed) or closed signature block.
    public var signatureForm: SignatureForm
    /// Whether the signature block comes before or after the token element.
    public var signaturePlacement: SignaturePlacement
    /// Byte range of the token element: the signed bytes.
    public var tokenElement: Range<Int>

    /// Frames one complete record of decoded XML.
    init(xml: [UInt8]) throws(TokenError) {
        var scanner = FrameScanner()
        scanner.scan(xml.span)
        self = try scanner.frame(in: xml.span)
    }

    init(signatureText: Range<Int>, signatureForm: SignatureForm, signaturePlacement: SignaturePlacement, tokenElement: Range<Int>) {
        self.signatureText = signatureText
        self.signatureForm = signatureForm
        self.signaturePlacement = signaturePlacement
        self.tokenElement = tokenElement
    }
}
