import EntitlementTokens

/// The claims of a Common Access Token (CTA-5007; a CWT, RFC 8392): a value
/// with two doors, ``init(cbor:limits:)`` from the COSE payload's bytes and
/// ``cbor()`` back, keeping every claim in the order written.
///
/// Reading checks the type of each claim this reader judges or shows (times
/// are integers, `cti` a byte string, `catu` a map of maps, …) and refuses
/// what it cannot read as `INVALID_TOKEN_FORMAT`. Claims it does not judge
/// are kept as read, so that ``CommonAccessTokenVerifier`` refuses them by
/// name rather than dropping them.
///
/// node-cat writes every map inside tag 259 (RFC 8949's registry: "map
/// datatype"), which changes nothing about the map; that tag is removed
/// where it wraps a map, and no other tag is given a meaning.
public struct CommonAccessToken: Sendable, Hashable {
    /// Every claim, in the order written (tag 259 removed around maps).
    public let claims: [CBORMapEntry]

    public let issuer: String?
    public let subject: String?
    /// `aud`: one string or an array of strings (RFC 8392 §3.1.3).
    public let audience: [String]?
    /// Seconds since 1970.
    public let expires: Int64?
    public let notBefore: Int64?
    public let issuedAt: Int64?
    /// `cti`, the token's identifier (the replay store's key).
    public let cti: [UInt8]?
    /// `catv`, the CAT version.
    public let version: Int64?
    public let replay: CATReplayPolicy?
    public let uriRestriction: CATURIRestriction?
    /// `catm`: the methods allowed, upper case as written.
    public let methods: [String]?
    public let networkRestriction: CATNetworkRestriction?
    /// `catr`: how the token asks to be renewed near its `exp`.
    public let renewal: CATRenewal?

    /// Reads the claims from a COSE payload.
    public init(cbor bytes: [UInt8], limits: CBORLimits = .commonAccessToken) throws(CDNRefusal) {
        let value: CBORValue
        do { value = try CBORValue(cbor: bytes, limits: limits) } catch { throw .format("the CAT claims are not CBOR: \(error)") }
        var removedTag = false
        guard let entries = Self.withoutMapTags(value, removed: &removedTag).mapEntries else { throw .format("the CAT claims are not a CBOR map") }
        try self.init(claims: entries)
    }

    /// Reads claims already decoded (the issuer builds its token this way).
    public init(claims written: [CBORMapEntry]) throws(CDNRefusal) {
        var removedTags = false
        let claims = written.map {
            CBORMapEntry(Self.withoutMapTags($0.key, removed: &removedTags), Self.withoutMapTags($0.value, removed: &removedTags))
        }
        if removedTags {
            // Two keys that differed only by tag 259 are now equal: read the
            // result again, so that duplicates are refused as in any map.
            do { _ = try CBORValue(cbor: CBORValue.map(claims).cbor()) } catch { throw .format("the CAT claims without tag 259: \(error)") }
        }
        self.claims = claims
        // Where each integer label first appears, found once: comparing keys with `.integer(label)`
        // would box a value per comparison (CBORValue is indirect).
        var positions: [Int64: Int] = [:]
        for (index, entry) in claims.enumerated() {
            if case .integer(let label) = entry.key, positions[label] == nil { positions[label] = index }
        }
        func value(_ claim: CATClaim) -> CBORValue? { positions[claim.rawValue].map { claims[$0].value } }
        func text(_ claim: CATClaim) throws(CDNRefusal) -> String? {
            guard let found = value(claim) else { return nil }
            guard let text = found.textValue else { throw .format("\(claim.name) is \(found.diagnostic()), not text") }
            return text
        }
        func time(_ claim: CATClaim) throws(CDNRefusal) -> Int64? {
            guard let found = value(claim) else { return nil }
            // RFC 8392 allows a float NumericDate; CAT issuers write integers, and a
            // float's rounding is one more way for two readers to disagree.
            guard let seconds = found.int64 else { throw .format("\(claim.name) is \(found.diagnostic()), not an integer number of seconds") }
            return seconds
        }
        issuer = try text(.iss)
        subject = try text(.sub)
        if let found = value(.aud) {
            let items = found.arrayItems ?? [found]
            let names = items.compactMap(\.textValue)
            guard !items.isEmpty, names.count == items.count else { throw .format("aud is \(found.diagnostic()), not text or an array of text") }
            audience = names
        } else {
            audience = nil
        }
        expires = try time(.exp)
        notBefore = try time(.nbf)
        issuedAt = try time(.iat)
        if let found = value(.cti) {
            guard let bytes = found.bytesValue else { throw .format("cti is \(found.diagnostic()), not a byte string") }
            cti = bytes
        } else {
            cti = nil
        }
        if let found = value(.catv) {
            guard let number = found.int64 else { throw .format("catv is \(found.diagnostic()), not an integer") }
            version = number
        } else {
            version = nil
        }
        if let found = value(.catreplay) {
            guard let policy = found.int64.flatMap(CATReplayPolicy.init(rawValue:)) else {
                throw .format("catreplay is \(found.diagnostic()); 0 (permitted), 1 (prohibited) or 2 (reuse detection)")
            }
            replay = policy
        } else {
            replay = nil
        }
        uriRestriction = try value(.catu).map { (found) throws(CDNRefusal) in try CATURIRestriction(claim: found) }
        if let found = value(.catm) {
            let items = found.arrayItems ?? [found]
            let names = items.compactMap(\.textValue)
            guard !items.isEmpty, names.count == items.count else { throw .format("catm is \(found.diagnostic()), not text or an array of text") }
            methods = names
        } else {
            methods = nil
        }
        networkRestriction = try value(.catnip).map { (found) throws(CDNRefusal) in try CATNetworkRestriction(claim: found) }
        // The common-access-token crate writes `catr: null` when it asks for no renewal
        // (its published vector, Fixtures/CAT/independent_vectors.json): read as no catr.
        renewal = try value(.catr).flatMap { (found) throws(CDNRefusal) in found == .null ? nil : try CATRenewal(claim: found) }
    }

    /// The seconds in which `catr` asks for renewal (`exp − deadline ≤ now < exp`);
    /// nil without `catr` or without `exp`.
    public var renewalWindow: Range<Int64>? {
        guard let renewal, let expires else { return nil }
        return renewal.window(expires: expires)
    }

    /// The value of `claim`, as read.
    public func value(of claim: CATClaim) -> CBORValue? {
        claims.first {
            if case .integer(let label) = $0.key { label == claim.rawValue } else { false }
        }?.value
    }

    /// The claims as a CBOR map in preferred serialization, in the order held.
    public func cbor() -> [UInt8] { CBORValue.map(claims).cbor() }

    /// The claims in diagnostic notation with their names as comments:
    /// `{1 /iss/: "tnt", 4 /exp/: 1768478400, 312 /catu/: {3 /path/: {1 /prefix/: "/hls/tnt/"}}}`.
    public var diagnostic: String { CBORValue.map(claims).diagnostic(labels: CATClaim.diagnosticLabels) }

    /// One field per claim, for display: the claim's name, and its value as
    /// raw text (a string claim as written; an integer in decimal; a byte
    /// string in hex; anything else in diagnostic notation). Escaped by whoever prints it.
    public var fields: [CDNField] {
        claims.map { entry in
            let name = entry.key.int64.flatMap(CATClaim.init(rawValue:))?.name ?? CATClaim.describe(entry.key)
            let text: String
            switch entry.value {
            case .text(let value): text = value
            case .integer(let value): text = String(value)
            case .bytes(let value): text = ByteRules.lowercaseHex(value)
            default:
                let labels = entry.key.int64.flatMap { CATClaim.diagnosticLabels.nested[$0] }
                text = entry.value.diagnostic(labels: labels)
            }
            return CDNField(name, text)
        }
    }

    /// `value` without tag 259 wherever that tag wraps a map, at any depth;
    /// `removed` is set when one was.
    static func withoutMapTags(_ value: CBORValue, removed: inout Bool) -> CBORValue {
        switch value {
        case .tagged(259, let content) where content.mapEntries != nil:
            removed = true
            return withoutMapTags(content, removed: &removed)
        case .tagged(let tag, let content): return .tagged(tag, withoutMapTags(content, removed: &removed))
        case .map(let entries):
            return .map(entries.map { CBORMapEntry(withoutMapTags($0.key, removed: &removed), withoutMapTags($0.value, removed: &removed)) })
        case .array(let items): return .array(items.map { withoutMapTags($0, removed: &removed) })
        default: return value
        }
    }
}
