import EntitlementTokens
import Foundation

/// FuzzJSON: the REST JSON scanner (docs/DESIGN.md#transport-forms), differential.
///
/// - **Against a reference parser** (Foundation's `JSONSerialization`): on a
///   document within the limits, the scanner refuses as malformed JSON
///   (`invalidJSON`) exactly what the reference refuses, and where both accept,
///   the records are what the reference's reading says: the same
///   `serializedToken` strings, byte for byte (v1, or one per v2 decision), the
///   same string and null envelope members, and `jsonWithoutToken` exactly where
///   the reference finds no token. Where the two readings of RFC 8259 differ on
///   purpose, the difference is allowed: a lone `\u` surrogate (§8.2 leaves it
///   unpredictable; the scanner refuses it), a trailing comma (the reference takes
///   it, the RFC's grammar does not), a number beyond a Double's range (the
///   reference refuses it; §9 lets a parser take any number of the grammar, and
///   the scanner keeps numbers as written), a document holding a NUL byte
///   (the reference takes one with NULs early on for UTF-16 or UTF-32; no JSON
///   text holds one, so no record of it may carry a token), an ambiguous envelope
///   (`ambiguousEnvelope`; the reference keeps one of two duplicate members and
///   cannot say, so the oracle only checks that v1 and v2 members together are
///   refused), and U+FEFF at the start of a string (the reference's NSString drops
///   it, so documents holding U+FEFF are compared on acceptance only).
/// - **Chunk invariance**: fed in the fuzzer's chunks (or byte by byte), the
///   splitter gives exactly the records, envelopes and errors it gives fed whole.
///
/// Input layout: FuzzStream's (``StreamOracle/plan(_:)``): byte 0 holds the
/// number of cut points and flags, then the cut points, then the document.
/// Inputs whose first non-blank byte (after a UTF-8 BOM) is not `{` or `[` are
/// not JSON to the splitter and are left to FuzzStream.
public final class JSONOracle {
    public static let target = "FuzzJSON"

    public init() {}

    public func check(_ input: [UInt8]) {
        guard let plan = StreamOracle.plan(input) else { return }
        let payload = plan.payload
        var body = payload[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        guard let first = body.first(where: { !Self.isWhitespace($0) }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        else { return }

        let whole = Self.records(payload, cuts: [])
        let wholeSummary = whole.map(Self.summary)
        let chunked = Self.records(payload, cuts: plan.cuts).map(Self.summary)
        if chunked != wholeSummary {
            oracleFailure(
                Self.target,
                "cut at \(plan.cuts) the document gives other records than whole\n--- whole\n\(wholeSummary.joined(separator: "\n"))\n--- chunked\n\(chunked.joined(separator: "\n"))"
            )
        }
        if plan.byteByByte && payload.count <= 1024 {
            let bytewise = Self.records(payload, cuts: Array(0..<payload.count)).map(Self.summary)
            if bytewise != wholeSummary {
                oracleFailure(
                    Self.target,
                    "fed byte by byte the document gives other records than whole\n--- whole\n\(wholeSummary.joined(separator: "\n"))\n--- bytewise\n\(bytewise.joined(separator: "\n"))"
                )
            }
        }
        Self.compareWithReference(whole, document: Array(body))
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    static func records(_ payload: [UInt8], cuts: [Int]) -> [TokenRecord] {
        var splitter = RecordSplitter()
        var records: [TokenRecord] = []
        var start = 0
        for cut in cuts + [payload.count] where cut >= start {
            records += splitter.feed(payload[start..<cut])
            start = cut
        }
        return records + splitter.finish()
    }

    static func summary(_ record: TokenRecord) -> String {
        "#\(record.index) line=\(record.line) offset=\(record.byteOffset) token=\(escaped(record.bytes))"
            + (record.envelope.map { " " + Summary.of($0) } ?? "")
            + (record.error.map { " " + Summary.of($0) } ?? "")
    }

    static func compareWithReference(_ records: [TokenRecord], document: [UInt8]) {
        let shown = { records.map(summary).joined(separator: "\n") }
        let documentError = records.count == 1 ? records[0].error : nil
        if let code = documentError?.code, [.jsonTooDeep, .jsonLimitExceeded, .inputTooLarge].contains(code) {
            return  // beyond the limits: the reference has none to compare
        }
        if document.contains(0) {
            // A NUL byte is never in a UTF-8 JSON text, not even raw in a string; and
            // the reference reads a document with NULs among its first bytes as
            // UTF-16 or UTF-32 (RFC 4627's detection: `{\0}\0` is `{}` to it), so it
            // is no reference here. No record may carry a token.
            if records.contains(where: { $0.error == nil }) {
                oracleFailure(target, "a document holding a NUL byte gave a token\n\(shown())")
            }
            return
        }
        let reference = try? JSONSerialization.jsonObject(with: Data(document), options: [])
        if let error = documentError, error.code == .invalidJSON {
            if reference == nil { return }
            if reference is [Any], error.message.contains("is an array") { return }
            if error.message.contains("surrogate") || error.message.contains("trailing comma") { return }
            oracleFailure(target, "the scanner refuses a document the reference accepts\n\(shown())")
        }
        guard let reference else {
            if hasNumberBeyondDouble(document) { return }
            oracleFailure(target, "the scanner accepts a document the reference refuses (\(documentError.map(Summary.of) ?? "no error"))\n\(shown())")
        }
        guard let root = reference as? [String: Any] else {
            oracleFailure(target, "the reference reads a \(type(of: reference)), the scanner did not say it is no object\n\(shown())")
        }
        if documentError?.code == .ambiguousEnvelope {
            return  // a duplicate member, which the reference cannot show (see the type's comment)
        }
        if mayHoldFEFF(document) {
            return  // the reference's strings drop a leading U+FEFF (NSString does), so its names and tokens differ
        }
        func expectNoToken(_ record: TokenRecord?, _ why: String) {
            guard let record, record.error?.code == .jsonWithoutToken else {
                oracleFailure(target, "\(why): expected jsonWithoutToken\n\(shown())")
            }
        }
        if root["serializedToken"] != nil && root["decisions"] != nil {
            oracleFailure(target, "v1 and v2 members together were not refused as ambiguous\n\(shown())")
        }
        if let token = root["serializedToken"] {
            guard let text = token as? String else { return expectNoToken(records.first, "serializedToken is no string") }
            guard records.count == 1, records[0].error == nil, sameText(records[0].bytes, text) else {
                oracleFailure(target, "the v1 token differs from the reference's\nreference: \(escaped(text))\n\(shown())")
            }
            checkEnvelope(records[0].envelope, against: root.filter { $0.key != "serializedToken" }, shown: shown)
            return
        }
        guard let decisionsValue = root["decisions"] else { return expectNoToken(records.first, "no token member") }
        guard let decisions = decisionsValue as? [Any] else { return expectNoToken(records.first, "decisions is no array") }
        if decisions.isEmpty { return expectNoToken(records.first, "no decisions") }
        guard records.count == decisions.count else {
            oracleFailure(target, "\(records.count) records for \(decisions.count) decisions\n\(shown())")
        }
        for (record, decision) in zip(records, decisions) {
            let token = ((decision as? [String: Any])?["token"] as? [String: Any])?["serializedToken"] as? String
            guard let token else {
                expectNoToken(record, "a decision without a string token")
                continue
            }
            guard record.error == nil, sameText(record.bytes, token) else {
                oracleFailure(target, "decision \(record.index)'s token differs from the reference's\nreference: \(escaped(token))\n\(shown())")
            }
            var members = (decision as? [String: Any]) ?? [:]
            let tokenMembers = ((decision as? [String: Any])?["token"] as? [String: Any]) ?? [:]
            // Where the decision and its token name the same member, both are shown.
            for (key, value) in tokenMembers where key != "serializedToken" && members[key] == nil { members[key] = value }
            checkEnvelope(record.envelope, against: members, shown: shown, allowingExtra: Set(tokenMembers.keys))
        }
    }

    /// U+FEFF in the document, as UTF-8 or as an escape.
    static func mayHoldFEFF(_ document: [UInt8]) -> Bool {
        contains(document, [0xEF, 0xBB, 0xBF]) || String(decoding: document, as: UTF8.self).lowercased().contains("\\ufeff")
    }

    static func sameText(_ bytes: [UInt8], _ reference: String) -> Bool {
        bytes.elementsEqual(reference.utf8)
    }

    /// Whether a number outside strings reads as an infinite Double (the reference refuses those).
    static func hasNumberBeyondDouble(_ document: [UInt8]) -> Bool {
        var index = 0
        var inString = false
        while index < document.count {
            let byte = document[index]
            if inString {
                if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { inString = false }
                index += 1
                continue
            }
            if byte == UInt8(ascii: "\"") {
                inString = true
                index += 1
                continue
            }
            guard byte == UInt8(ascii: "-") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) else {
                index += 1
                continue
            }
            let start = index
            while index < document.count, "0123456789+-.eE".utf8.contains(document[index]) { index += 1 }
            if let value = Double(String(decoding: document[start..<index], as: UTF8.self)), value.isInfinite { return true }
        }
        return false
    }

    /// The envelope holds exactly the scalar members, strings and nulls equal.
    static func checkEnvelope(
        _ envelope: RESTEnvelope?,
        against members: [String: Any],
        shown: () -> String,
        allowingExtra extra: Set<String> = []
    ) {
        guard let envelope else { oracleFailure(target, "no envelope\n\(shown())") }
        let scalars = members.filter { !($0.value is [Any]) && !($0.value is [String: Any]) }
        let keys = Set(envelope.fields.map(\.key))
        guard keys == Set(scalars.keys) else {
            oracleFailure(target, "envelope members \(keys.sorted()) but the reference has \(scalars.keys.sorted())\n\(shown())")
        }
        // Names that Swift's String equality merges (canonically equivalent ones)
        // hold one value in the reference: compare the names only.
        guard keys.count == envelope.fields.count else { return }
        for (key, value) in envelope.fields where !extra.contains(key) {
            let expected = scalars[key]!
            switch value {
            case .string(let text):
                guard expected as? String == text else {
                    oracleFailure(target, "envelope '\(key)' is \(escaped(text)), the reference's \(expected)\n\(shown())")
                }
            case .null:
                guard expected is NSNull else { oracleFailure(target, "envelope '\(key)' is null, the reference's \(expected)\n\(shown())") }
            case .number, .bool:
                guard !(expected is String), !(expected is NSNull) else {
                    oracleFailure(target, "envelope '\(key)' is \(value), the reference's \(expected)\n\(shown())")
                }
            }
        }
    }
}
