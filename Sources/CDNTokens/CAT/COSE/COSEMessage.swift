/// A COSE_Mac0 or COSE_Sign1 message (RFC 9052 §6.2, §4.2) as read: the
/// protected header's bytes exactly as received (the MAC or signature covers
/// them), both headers, the payload and the tag or signature, and whether the
/// COSE tag (17, 18) and the CWT tag (61, RFC 8392 §6) were written.
///
/// Reading checks the structure only; ``CommonAccessTokenVerifier`` checks
/// the algorithm against the key and the tag or signature.
public struct COSEMessage: Sendable, Hashable {
    public enum Structure: String, Sendable, Hashable {
        case mac0 = "COSE_Mac0"
        case sign1 = "COSE_Sign1"

        /// The CBOR tag (RFC 9052 §2): 17 for COSE_Mac0, 18 for COSE_Sign1.
        public var tag: UInt64 { self == .mac0 ? 17 : 18 }
        /// The context string of the MAC_structure or Sig_structure.
        var context: String { self == .mac0 ? "MAC0" : "Signature1" }
    }

    public let structure: Structure
    /// The `protected` byte string as received (empty or a CBOR map).
    public let protectedHeaderBytes: [UInt8]
    public let protectedHeader: [CBORMapEntry]
    public let unprotectedHeader: [CBORMapEntry]
    public let payload: [UInt8]
    /// The MAC tag (COSE_Mac0) or the signature (COSE_Sign1).
    public let authenticationTag: [UInt8]
    /// The message was wrapped in its COSE tag (17 or 18).
    public let hasCOSETag: Bool
    /// The message was wrapped in the CWT tag 61 (RFC 8392 §6).
    public let hasCWTTag: Bool

    /// Header label 1 (RFC 9052 §3.1).
    static let algorithmLabel: CBORValue = .integer(1)
    static let criticalLabel: CBORValue = .integer(2)
    static let keyIDLabel: CBORValue = .integer(4)

    /// Reads a COSE message, with or without its COSE tag and with or without
    /// the CWT tag 61 outside it. Untagged, the protected `alg` says which
    /// structure it is (5: COSE_Mac0, −7: COSE_Sign1); otherwise it is refused.
    public init(cbor bytes: [UInt8], limits: CBORLimits = .commonAccessToken) throws(CDNRefusal) {
        var value: CBORValue
        do { value = try CBORValue(cbor: bytes, limits: limits) } catch { throw .format("the COSE message is not CBOR: \(error)") }
        var hasCWTTag = false
        if case .tagged(61, let content) = value {
            hasCWTTag = true
            value = content
        }
        var structure: Structure? = nil
        if case .tagged(let tag, let content) = value {
            switch tag {
            case 17: structure = .mac0
            case 18: structure = .sign1
            default: throw .format("CBOR tag \(tag) where COSE_Mac0 (17) or COSE_Sign1 (18) was expected")
            }
            value = content
        }
        let hasCOSETag = structure != nil
        guard let items = value.arrayItems, items.count == 4 else {
            throw .format("a COSE message is an array of 4 items (protected, unprotected, payload, tag)")
        }
        guard let protectedBytes = items[0].bytesValue else { throw .format("the COSE protected header is not a byte string") }
        let protectedHeader: [CBORMapEntry]
        if protectedBytes.isEmpty {
            protectedHeader = []  // RFC 9052 §3: an empty byte string stands for an empty map.
        } else {
            let decoded: CBORValue
            do { decoded = try CBORValue(cbor: protectedBytes, limits: limits) } catch {
                throw .format("the COSE protected header is not CBOR: \(error)")
            }
            guard let entries = decoded.mapEntries else { throw .format("the COSE protected header is not a map") }
            protectedHeader = entries
        }
        guard let unprotectedHeader = items[1].mapEntries else { throw .format("the COSE unprotected header is not a map") }
        guard let payload = items[2].bytesValue else {
            throw .format("the COSE payload is not a byte string (a detached or text payload is not a CAT)")
        }
        guard let tag = items[3].bytesValue else { throw .format("the COSE tag or signature is not a byte string") }
        for entry in protectedHeader + unprotectedHeader {
            switch entry.key {
            case .integer, .text: break
            default: throw .format("a COSE header label \(entry.key.diagnostic()) that is neither an integer nor text")
            }
        }
        // RFC 9052 §3: a label must not be in both buckets.
        let protectedLabels = Set(protectedHeader.map(\.key))
        if let both = unprotectedHeader.first(where: { protectedLabels.contains($0.key) }) {
            throw .format("COSE header label \(both.key.diagnostic()) is in both the protected and the unprotected header")
        }
        for header in [protectedHeader, unprotectedHeader] {
            if let kid = header.first(where: { $0.key == Self.keyIDLabel }), kid.value.bytesValue == nil {
                throw .format("the COSE kid (4) is not a byte string")
            }
        }
        if structure == nil {
            let algorithm = protectedHeader.first { $0.key == Self.algorithmLabel }?.value.int64.flatMap(COSEAlgorithm.init(rawValue:))
            guard let algorithm else {
                throw .format("an untagged COSE message whose protected alg is not 5 (COSE_Mac0) or −7 (COSE_Sign1)")
            }
            structure = algorithm.structure
        }
        self.structure = structure!
        self.protectedHeaderBytes = protectedBytes
        self.protectedHeader = protectedHeader
        self.unprotectedHeader = unprotectedHeader
        self.payload = payload
        self.authenticationTag = tag
        self.hasCOSETag = hasCOSETag
        self.hasCWTTag = hasCWTTag
    }

    /// A message to be written: the protected header is encoded here, and its
    /// bytes are what the tag or signature must cover.
    init(
        structure: Structure,
        protectedHeader: [CBORMapEntry],
        unprotectedHeader: [CBORMapEntry],
        payload: [UInt8],
        authenticationTag: [UInt8],
        hasCOSETag: Bool = true,
        hasCWTTag: Bool = false
    ) {
        self.structure = structure
        self.protectedHeader = protectedHeader
        self.protectedHeaderBytes = protectedHeader.isEmpty ? [] : CBORValue.map(protectedHeader).cbor()
        self.unprotectedHeader = unprotectedHeader
        self.payload = payload
        self.authenticationTag = authenticationTag
        self.hasCOSETag = hasCOSETag
        self.hasCWTTag = hasCWTTag
    }

    /// The same message with another tag or signature (to sign what ``toBeAuthenticated`` gives).
    func with(authenticationTag: [UInt8]) -> COSEMessage {
        COSEMessage(unchecked: self, authenticationTag: authenticationTag)
    }

    private init(unchecked other: COSEMessage, authenticationTag: [UInt8]) {
        structure = other.structure
        protectedHeaderBytes = other.protectedHeaderBytes
        protectedHeader = other.protectedHeader
        unprotectedHeader = other.unprotectedHeader
        payload = other.payload
        self.authenticationTag = authenticationTag
        hasCOSETag = other.hasCOSETag
        hasCWTTag = other.hasCWTTag
    }

    /// The message as CBOR, tagged as it was read (or made): the protected
    /// header's bytes are written as received, never re-encoded.
    public func cbor() -> [UInt8] {
        Self.cbor(
            structure: hasCOSETag ? structure : nil,
            protectedHeaderBytes: protectedHeaderBytes,
            unprotectedHeader: unprotectedHeader,
            payload: payload,
            authenticationTag: authenticationTag,
            hasCWTTag: hasCWTTag
        )
    }

    /// A message written from its parts, tagged with `structure`'s tag unless
    /// it is nil: what the issuer writes without making a `COSEMessage`.
    static func cbor(
        structure: Structure?,
        protectedHeaderBytes: [UInt8],
        unprotectedHeader: [CBORMapEntry],
        payload: [UInt8],
        authenticationTag: [UInt8],
        hasCWTTag: Bool = false
    ) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(payload.count + authenticationTag.count + protectedHeaderBytes.count + 32)
        if hasCWTTag { CBORValue.writeHead(major: 6, argument: 61, into: &output) }
        if let structure { CBORValue.writeHead(major: 6, argument: structure.tag, into: &output) }
        CBORValue.writeArrayHead(count: 4, into: &output)
        CBORValue.writeBytes(protectedHeaderBytes, into: &output)
        CBORValue.map(unprotectedHeader).write(into: &output)
        CBORValue.writeBytes(payload, into: &output)
        CBORValue.writeBytes(authenticationTag, into: &output)
        return output
    }

    /// The bytes the MAC or signature covers: `["MAC0", protected, h'', payload]`
    /// (RFC 9052 §6.3) or `["Signature1", protected, h'', payload]` (§4.4),
    /// with the protected header as received and no external data.
    public var toBeAuthenticated: [UInt8] {
        Self.toBeAuthenticated(structure: structure, protectedHeaderBytes: protectedHeaderBytes, payload: payload)
    }

    static func toBeAuthenticated(structure: Structure, protectedHeaderBytes: [UInt8], payload: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(payload.count + protectedHeaderBytes.count + 24)
        CBORValue.writeArrayHead(count: 4, into: &output)
        CBORValue.writeText(structure.context, into: &output)
        CBORValue.writeBytes(protectedHeaderBytes, into: &output)
        CBORValue.writeBytes([], into: &output)
        CBORValue.writeBytes(payload, into: &output)
        return output
    }

    /// The protected header an issuer writes: `{1: alg}`.
    static func protectedHeaderBytes(algorithm: COSEAlgorithm) -> [UInt8] {
        var output: [UInt8] = []
        CBORValue.writeMapHead(count: 1, into: &output)
        CBORValue.writeInteger(1, into: &output)  // algorithmLabel
        CBORValue.writeInteger(algorithm.rawValue, into: &output)
        return output
    }

    /// `alg` from the protected header, as written.
    public var protectedAlgorithm: CBORValue? { protectedHeader.first { $0.key == Self.algorithmLabel }?.value }

    /// `alg` written in the unprotected header, which is never trusted.
    public var unprotectedAlgorithm: CBORValue? { unprotectedHeader.first { $0.key == Self.algorithmLabel }?.value }

    /// `kid` (RFC 9052 §3.1), from the unprotected or the protected header.
    public var keyID: [UInt8]? {
        (unprotectedHeader + protectedHeader).first { $0.key == Self.keyIDLabel }?.value.bytesValue
    }

    /// `crit` (RFC 9052 §3.1): labels the recipient must understand; this reader understands none.
    var criticalHeaders: CBORValue? { protectedHeader.first { $0.key == Self.criticalLabel }?.value }
}
