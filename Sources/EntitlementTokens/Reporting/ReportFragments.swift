/// The parts of consecutive report objects that come from the same shared
/// values, kept as the bytes written for them the first time.
///
/// A stream renders a chunk of consecutive tokens into one ``JSONWriter``,
/// and most of each object repeats from the one before: the tokens of one
/// channel share one reading of their Media RSS resource (the decoder hands
/// them the same object), and the verdicts of one run share the key and the
/// lists of checks. When the values an object is made from are the ones the
/// last object had, the bytes written for them then are copied instead of
/// written again. Each kept part is recognised by the values it came from,
/// never by its text alone, so the output is byte for byte what writing it
/// again would give. One set of fragments belongs to one writer.
struct ReportFragments {
    /// The writer's memo slots for single strings (``JSONWriter/string(_:repeating:)``):
    /// the reason, the resource, the verifying key, the source; the fields from here on.
    static let firstFieldSlot = 4

    /// The resource reading the last `resourceID` and `resourceRSS` came from, and where they were written.
    private var reading: (any MediaRSSReading)?
    private var readingBytes = 0..<0

    /// The reading's warning, made when the reading was last met (asking the
    /// reading takes its lock).
    private var readingWarning: String?

    /// The paths of the last token's fields when none repeated, and where
    /// each `"path":` was written.
    private var fieldPaths: [String] = []
    private var fieldKeyBytes: [Range<Int>] = []

    /// The last `issuedAt` and `expiresAt`, and where their text was written.
    private var instants: [(milliseconds: Int64, bytes: Range<Int>)?] = [nil, nil]

    /// The key and lists the last `verifiedBy`, `checksRun` and `checksSkipped` came from, and where they were written.
    private var hasChecks = false
    private var checksKey: PublicKey?
    private var checksRun: [VerificationCheck] = []
    private var checksSkipped: [SkippedCheck] = []
    private var checksBytes = 0..<0

    init() {}

    /// `,"resourceID":…,"resourceRSS":…`. The reading decides both: the decoder
    /// shares one only between tokens whose `resourceID` has the same bytes.
    mutating func writeResource(_ resourceID: String?, of token: DecodedToken, to json: inout JSONWriter) {
        let current = token.mediaRSSReading
        // Compared in place: binding the kept values would copy (retain) them per token.
        if let current, current === reading {
            json.repeatBytes(readingBytes)
            return
        }
        let start = json.count
        json.literal(",\"resourceID\":")
        json.string(resourceID, repeating: 1)
        json.literal(",\"resourceRSS\":")
        // Only a resource that looks like RSS is read (once, lazily); a bare id is null.
        if let rss = token.mediaRSS {
            json.literal("{\"channel\":")
            json.string(rss.channelTitle)
            json.literal(",\"itemTitle\":")
            json.string(rss.itemTitle)
            json.literal(",\"guid\":")
            json.string(rss.itemGUID)
            json.literal(",\"rating\":")
            json.string(rss.rating)
            json.literal("}")
        } else {
            json.null()
        }
        if let current {
            reading = current
            readingBytes = start..<json.count
            readingWarning = current.warning
        }
    }

    /// The elements of `"warnings":[…]`: decoding's own, then the reading's.
    /// Called after ``writeResource(_:of:to:)`` of the same token.
    mutating func writeWarnings(of token: DecodedToken, to json: inout JSONWriter) {
        let transport = token.transportWarnings
        for index in transport.indices {
            json.element()
            json.string(transport[index])
        }
        guard let current = token.mediaRSSReading else { return }
        let warning = current === reading ? readingWarning : current.warning
        if let warning {
            json.element()
            json.string(warning)
        }
    }

    /// `,"fields":{…}`. When the paths are the last token's (and none
    /// repeats), each `"path":` is copied from there.
    mutating func writeFields(_ fields: [TokenField], to json: inout JSONWriter) {
        json.literal(",\"fields\":")
        json.beginObject()
        if Self.samePaths(fields, fieldPaths) {
            for index in fields.indices {
                json.element()
                json.repeatBytes(fieldKeyBytes[index])
                json.string(fields[index].value, repeating: Self.firstFieldSlot + index)
            }
        } else if TokenFieldGroup.hasRepeatedPath(fields) {
            fieldPaths = []
            TokenReport.writeFields(fields, to: &json)
        } else {
            fieldPaths = fields.map(\.path)
            fieldKeyBytes.removeAll(keepingCapacity: true)
            for index in fields.indices {
                json.element()
                let start = json.count
                json.string(fields[index].path)
                json.literal(":")
                fieldKeyBytes.append(start..<json.count)
                json.string(fields[index].value, repeating: Self.firstFieldSlot + index)
            }
        }
        json.endObject()
    }

    /// Paths with the same bytes, in the same order.
    private static func samePaths(_ fields: [TokenField], _ paths: [String]) -> Bool {
        guard fields.count == paths.count, !paths.isEmpty else { return false }
        for index in fields.indices where !fields[index].path.hasSameUTF8(as: paths[index]) {
            return false
        }
        return true
    }

    /// An instant as quoted ISO 8601 (`slot` 0 for `issuedAt`, 1 for `expiresAt`).
    mutating func writeInstant(_ instant: TokenTimestamp, slot: Int, to json: inout JSONWriter) {
        if let last = instants[slot], last.milliseconds == instant.millisecondsSince1970 {
            json.repeatBytes(last.bytes)
            return
        }
        let start = json.count
        json.timestamp(instant)
        instants[slot] = (instant.millisecondsSince1970, start..<json.count)
    }

    /// `,"verifiedBy":…,"checksRun":[…],"checksSkipped":[…]` of a verdict.
    mutating func writeVerdictChecks(
        key: PublicKey?,
        checksRun: [VerificationCheck],
        checksSkipped: [SkippedCheck],
        to json: inout JSONWriter
    ) {
        if hasChecks, Self.sameKey(checksKey, key), self.checksRun == checksRun, Self.sameBytes(self.checksSkipped, checksSkipped) {
            json.repeatBytes(checksBytes)
            return
        }
        let start = json.count
        json.literal(",\"verifiedBy\":")
        json.string(key?.description, repeating: 2)
        json.literal(",\"checksRun\":")
        json.beginArray()
        for check in checksRun {
            json.element()
            json.string(check.rawValue)
        }
        json.endArray()
        json.literal(",\"checksSkipped\":")
        json.beginArray()
        for skipped in checksSkipped {
            json.element()
            json.literal("{\"check\":")
            json.string(skipped.check.rawValue)
            json.literal(",\"reason\":")
            json.string(skipped.reason)
            json.literal(",\"requested\":")
            json.bool(skipped.requested)
            json.literal("}")
        }
        json.endArray()
        hasChecks = true
        checksKey = key
        self.checksRun = checksRun
        self.checksSkipped = checksSkipped
        checksBytes = start..<json.count
    }

    /// The same loaded key: its description is made once, when it is loaded.
    private static func sameKey(_ lhs: PublicKey?, _ rhs: PublicKey?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let lhs?, let rhs?): lhs.storage === rhs.storage
        default: false
        }
    }

    /// Skipped checks that write the same bytes: reasons compared byte for
    /// byte (`==` would take `Café` composed for `Café` decomposed).
    private static func sameBytes(_ lhs: [SkippedCheck], _ rhs: [SkippedCheck]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in lhs.indices {
            guard lhs[index].check == rhs[index].check, lhs[index].requested == rhs[index].requested,
                lhs[index].reason.hasSameUTF8(as: rhs[index].reason)
            else { return false }
        }
        return true
    }
}

extension EntitlementToken {
    /// `,"kind":` to `"fingerprint":…` of the report object
    /// (docs/DESIGN.md#output-forms), with one look at the kind: the
    /// kind-independent accessors would each switch on it and copy out a string.
    func writeReportMembers(of token: DecodedToken, to json: inout JSONWriter, fragments: inout ReportFragments) {
        switch self {
        case .media(let media):
            json.literal(",\"kind\":\"media\",\"root\":")
            json.string(media.root.rawValue)
            json.literal(",\"issuedAt\":")
            fragments.writeInstant(media.issueTime, slot: 0, to: &json)
            json.literal(",\"expiresAt\":")
            fragments.writeInstant(media.expiry, slot: 1, to: &json)
            json.literal(",\"requestorID\":")
            json.string(media.requestorID)
            fragments.writeResource(media.resourceID, of: token, to: &json)
            json.literal(",\"mvpdID\":")
            json.string(media.mvpdID)
            json.literal(",\"fingerprint\":null")
        case .authentication(let authentication):
            json.literal(",\"kind\":\"authentication\",\"root\":")
            json.string(AuthenticationToken.root)
            json.literal(",\"issuedAt\":null,\"expiresAt\":")
            fragments.writeInstant(authentication.expires, slot: 1, to: &json)
            json.literal(",\"requestorID\":")
            json.string(authentication.requestorID)
            fragments.writeResource(nil, of: token, to: &json)
            json.literal(",\"mvpdID\":")
            json.string(authentication.mvpdID)
            json.literal(",\"fingerprint\":")
            json.string(authentication.fingerprint)
        case .authorization(let authorization):
            json.literal(",\"kind\":\"authorization\",\"root\":")
            json.string(AuthorizationToken.root)
            json.literal(",\"issuedAt\":null,\"expiresAt\":")
            fragments.writeInstant(authorization.expires, slot: 1, to: &json)
            json.literal(",\"requestorID\":")
            json.string(authorization.requestorID)
            fragments.writeResource(authorization.resourceID, of: token, to: &json)
            json.literal(",\"mvpdID\":")
            json.string(authorization.mvpdID)
            json.literal(",\"fingerprint\":")
            json.string(authorization.fingerprint)
        }
    }
}

extension JSONWriter {
    /// An instant as its quoted ISO 8601 text, written without making the `String`.
    mutating func timestamp(_ instant: TokenTimestamp) {
        instant.withISO8601 { quotedPlainText($0) }
    }
}
