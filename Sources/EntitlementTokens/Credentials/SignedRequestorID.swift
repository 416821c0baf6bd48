/// A signed requestor ID as the SDK's `setRequestor:signedRequestorID:` takes it
/// (docs/DESIGN.md#signed-requestor-ids): Base64 of a signature over the UTF-8 requestor ID, made with the
/// programmer's private key (RSA PKCS#1 v1.5, SHA-256 by default, SHA-1 for old
/// registrations).
///
/// It says nothing of which requestor it signs: that comes from the caller
/// (`--requestor`). Without one the signature is shown, not verified.
public struct SignedRequestorID: Sendable, Hashable {
    /// The signature's bytes.
    public let signature: [UInt8]
    /// The Base64 text as given, without line breaks around or inside it.
    public let base64: String
    /// The requestor the signature should sign, when the caller named one.
    public let requestor: String?

    /// Reads the Base64 (standard or URL alphabet, padded or not; line breaks
    /// skipped; a space is refused as a `+` lost in a query string).
    public init(base64 text: some Collection<UInt8>, requestor: String? = nil) throws(TokenError) {
        var bytes = Array(text)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        let first = bytes.firstIndex { !$0.isASCIIWhitespace } ?? bytes.endIndex
        let last = bytes.lastIndex { !$0.isASCIIWhitespace }.map { $0 + 1 } ?? first
        let trimmed = Array(bytes[first..<last])
        guard !trimmed.isEmpty else {
            throw TokenError(.emptyInput, stage: .transport, "the signed requestor ID is empty")
        }
        let decoded: [UInt8]
        do {
            decoded = try Base64.decode(trimmed, whitespace: .lineBreaks).bytes
        } catch {
            throw TransportDecoder.base64Error(error, assumed: "a signed requestor ID (Base64 of a signature)", offsetBase: first)
        }
        guard !decoded.isEmpty else {
            throw TokenError(.invalidFieldValue, stage: .model, "the signed requestor ID decodes to no bytes")
        }
        signature = decoded
        base64 = String(decoding: trimmed.filter { $0 != 0x0A && $0 != 0x0D }, as: UTF8.self)
        self.requestor = requestor
    }

    /// A signature made here (minting), with the requestor it signs.
    init(signature: [UInt8], requestor: String?) {
        self.signature = signature
        base64 = Base64.encode(signature)
        self.requestor = requestor
    }

    /// The same signature, to be checked against `requestor`.
    public func expecting(requestor: String?) -> SignedRequestorID {
        SignedRequestorID(signature: signature, base64: base64, requestor: requestor)
    }

    private init(signature: [UInt8], base64: String, requestor: String?) {
        self.signature = signature
        self.base64 = base64
        self.requestor = requestor
    }
}
