#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

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
        xml.withUnsafeBufferPointer { scanner.scan($0) }
        self = try xml.withUnsafeBufferPointer { (buffer) throws(TokenError) in try scanner.frame(in: buffer) }
    }

    init(signatureText: Range<Int>, signatureForm: SignatureForm, signaturePlacement: SignaturePlacement, tokenElement: Range<Int>) {
        self.signatureText = signatureText
        self.signatureForm = signatureForm
        self.signaturePlacement = signaturePlacement
        self.tokenElement = tokenElement
    }
}

/// Names that may only appear once per token, at the top level.
///
/// Static strings, not arrays: the scanner asks about every tag of every
/// token, and a global array costs a `swift_once` and a retain/release per use.
enum ReservedName {
    static var signatureInfo: StaticString { "signatureInfo" }

    static func isTokenRoot(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        // Most names (every field of every token) are none of these lengths.
        switch name.count {
        case 9: return equal("authToken", name)
        case 23: return equal("shortAuthorizationToken", name)
        case 24: return equal("simpleAuthorizationToken", name)
        case 25: return equal("simpleAuthenticationToken", name)
        default: return false
        }
    }

    @inline(__always)
    static func isSignatureInfo(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        equal(signatureInfo, name)
    }

    /// Length first, then memcmp: the scanner asks this for every tag of every
    /// token, and nearly every name differs in length from the reserved ones.
    @inline(__always)
    private static func equal(_ reserved: StaticString, _ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard reserved.utf8CodeUnitCount == name.count else { return false }
        return memcmp(reserved.utf8Start, name.baseAddress!, name.count) == 0
    }
}
