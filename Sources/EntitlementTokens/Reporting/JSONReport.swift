// The JSON object (docs/DESIGN.md#output-forms) for one token, keys in a fixed order and every
// key always present (null when unknown), so scripts can rely on the shape.
///
// Written straight into UTF-8 bytes (`JSONWriter`): a `verify --format
// jsonl` run spends more time here than anywhere but the signature check,
// so no intermediate strings are built per member.
extension TokenReport {
    /// The report as one JSON object (UTF-8), every key of docs/DESIGN.md#output-forms present.
    /// `showDecodedXML` adds `decodedXML`: the whole decoded XML cut around
    /// the signed bytes (what the web debugger highlights).
    public func json(showSignedBytes: Bool = false, showDecodedXML: Bool = false) -> [UInt8] {
        var json = JSONWriter(capacity: 2048)
        write(to: &json, showSignedBytes: showSignedBytes, showDecodedXML: showDecodedXML)
        return json.bytes
    }

    /// Reports as one JSON array (UTF-8), one object per line.
    public static func jsonArray(_ reports: [TokenReport], showSignedBytes: Bool = false, showDecodedXML: Bool = false) -> [UInt8] {
        var json = JSONWriter(capacity: 2048 * max(1, reports.count))
        json.literal("[")
        for (index, report) in reports.enumerated() {
            json.raw(index == 0 ? "\n" : ",\n")
            report.write(to: &json, showSignedBytes: showSignedBytes, showDecodedXML: showDecodedXML)
        }
        json.raw(reports.isEmpty ? "]\n" : "\n]\n")
        return json.bytes
    }

    func write(to json: inout JSONWriter, showSignedBytes: Bool, showDecodedXML: Bool = false) {
        var fragments = ReportFragments()
        write(to: &json, fragments: &fragments, showSignedBytes: showSignedBytes, showDecodedXML: showDecodedXML)
    }

    /// The same, with the fragments of the objects written before it into `json`.
    func write(to json: inout JSONWriter, fragments: inout ReportFragments, showSignedBytes: Bool, showDecodedXML: Bool = false) {
        Self.writeObject(
            input: input,
            source: source,
            line: line,
            status: status,
            reason: reason,
            token: token ?? verdict?.token,
            error: error ?? verdict?.formatError,
            key: verdict?.key,
            checksRun: verdict?.checksRun,
            checksSkipped: verdict?.checksSkipped,
            signatureByteCount: verdict?.signatureByteCount,
            envelope: envelope,
            to: &json,
            fragments: &fragments,
            showSignedBytes: showSignedBytes,
            showDecodedXML: showDecodedXML
        )
    }

    /// The object of a verdict, written straight from it: the bytes
    /// ``write(to:showSignedBytes:showDecodedXML:)`` writes for
    /// `TokenReport(input:source:line:verdict:)` (with `recordEnvelope` for a
    /// record that carries no token), without making that report. A stream
    /// renders one per token, and a report value costs a copy of every
    /// reference the verdict holds, and its release.
    static func write(
        verdict: borrowing Verdict,
        input: Int,
        source: String,
        line: Int,
        recordEnvelope: RESTEnvelope?,
        to json: inout JSONWriter,
        fragments: inout ReportFragments,
        showSignedBytes: Bool
    ) {
        let token = verdict.token
        writeObject(
            input: input,
            source: source,
            line: line,
            status: verdict.status,
            reason: verdict.reason,
            token: token,
            error: verdict.formatError,
            key: verdict.key,
            checksRun: verdict.checksRun,
            checksSkipped: verdict.checksSkipped,
            signatureByteCount: verdict.signatureByteCount,
            envelope: token == nil ? recordEnvelope : token?.envelope,
            to: &json,
            fragments: &fragments,
            showSignedBytes: showSignedBytes,
            showDecodedXML: false
        )
    }

    /// The object's members in their fixed order. The names go out as
    /// literals with their separators (`,"line":`): every member but the first
    /// follows another, so no per-member bookkeeping is needed for them.
    private static func writeObject(
        input: Int,
        source: String,
        line: Int,
        status: VerificationStatus?,
        reason: String,
        token: DecodedToken?,
        error: TokenError?,
        key: PublicKey?,
        checksRun: [VerificationCheck]?,
        checksSkipped: [SkippedCheck]?,
        signatureByteCount: Int?,
        envelope: RESTEnvelope?,
        to json: inout JSONWriter,
        fragments: inout ReportFragments,
        showSignedBytes: Bool,
        showDecodedXML: Bool
    ) {
        json.beginObject()
        json.member("input")
        json.int(input)
        json.literal(",\"source\":")
        json.string(source, repeating: 3)
        json.literal(",\"line\":")
        json.int(line)
        json.literal(",\"status\":")
        json.string(status?.rawValue)
        json.literal(",\"reason\":")
        json.string(reason, repeating: 0)
        if let token {
            token.token.writeReportMembers(of: token, to: &json, fragments: &fragments)
            fragments.writeFields(token.fields, to: &json)
            json.literal(",\"transport\":")
            json.string(token.transport.description)
            json.literal(",\"signature\":{\"form\":")
            json.string(token.frame.signatureForm.rawValue)
            json.literal(",\"placement\":")
            json.string(token.frame.signaturePlacement.rawValue)
            json.literal(",\"bytes\":")
            json.int(signatureByteCount ?? token.signatureBytes?.count)
            // The Base64 text as it stands between the tags, white space trimmed.
            json.literal(",\"value\":")
            json.string(utf8: token.trimmedSignatureText)
            json.literal("}")
        } else {
            json.literal(",\"kind\":null,\"root\":null,\"issuedAt\":null,\"expiresAt\":null,\"requestorID\":null")
            json.literal(",\"resourceID\":null,\"resourceRSS\":null,\"mvpdID\":null,\"fingerprint\":null,\"fields\":{}")
            json.literal(",\"transport\":null,\"signature\":null")
        }
        if let checksRun, let checksSkipped {
            fragments.writeVerdictChecks(key: key, checksRun: checksRun, checksSkipped: checksSkipped, to: &json)
        } else {
            json.literal(",\"verifiedBy\":")
            json.string(key?.description, repeating: 2)
            json.literal(",\"checksRun\":null,\"checksSkipped\":null")
        }
        json.literal(",\"error\":")
        if let error {
            json.beginObject()
            error.writeLeadingMembers(to: &json)
            json.member("line")
            json.int(error.location?.line)
            json.member("column")
            json.int(error.location?.column)
            json.member("fieldsBeforeError")
            json.beginObject()
            writeFields(error.fieldsBeforeError, to: &json)
            json.endObject()
            json.endObject()
        } else {
            json.null()
        }
        json.literal(",\"warnings\":")
        json.beginArray()
        if let token {
            fragments.writeWarnings(of: token, to: &json)
        }
        json.endArray()
        json.literal(",\"envelope\":")
        if let envelope {
            json.beginObject()
            // Each value in its JSON type (docs/DESIGN.md#output-forms): a number stays as written.
            for field in envelope.fields {
                json.key(field.key)
                switch field.value {
                case .string(let text): json.string(text)
                case .number(let literal): json.raw(literal)
                case .bool(let value): json.bool(value)
                case .null: json.null()
                }
            }
            json.endObject()
        } else {
            json.null()
        }
        if showSignedBytes {
            json.member("signedBytes")
            json.string(token.map { String(decoding: $0.signedBytes, as: UTF8.self) })
        }
        if showDecodedXML {
            json.member("decodedXML")
            if let token {
                // Three strings, not byte offsets: a reader in another encoding
                // (JavaScript counts UTF-16) needs no arithmetic to find the cut.
                // The token element starts with `<` and ends with `>`, so the cuts
                // fall between whole UTF-8 characters.
                let xml = token.xml
                let signed = token.frame.tokenElement
                json.beginObject()
                json.member("beforeSigned")
                json.string(String(decoding: xml[..<signed.lowerBound], as: UTF8.self))
                json.member("signed")
                json.string(String(decoding: xml[signed], as: UTF8.self))
                json.member("afterSigned")
                json.string(String(decoding: xml[signed.upperBound...], as: UTF8.self))
                json.endObject()
            } else {
                json.null()
            }
        }
        json.endObject()
    }

    /// Every field by path. A path that occurs more than once (a list, or an
    /// unknown repeated element) maps to an array of its values in document
    /// order, at the place of its first occurrence.
    static func writeFields(_ fields: [TokenField], to json: inout JSONWriter) {
        // Usually no path repeats: then the fields go out in order, no grouping needed.
        guard TokenFieldGroup.hasRepeatedPath(fields) else {
            // By index: `for field in fields` would copy (retain) both strings of each field.
            for index in fields.indices {
                json.key(fields[index].path)
                json.string(fields[index].value, repeating: ReportFragments.firstFieldSlot + index)
            }
            return
        }
        for group in TokenFieldGroup.grouping(fields) {
            json.key(group.path)
            if group.values.count == 1 {
                json.string(group.values[0])
            } else {
                json.beginArray()
                for value in group.values {
                    json.element()
                    json.string(value)
                }
                json.endArray()
            }
        }
    }
}

extension DecodedToken {
    /// The signature block's text without the white space around it (a pretty-printed block has some).
    var trimmedSignatureText: ArraySlice<UInt8> {
        var text = xml[frame.signatureText]
        while let first = text.first, first.isASCIIWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isASCIIWhitespace { text = text.dropLast() }
        return text
    }
}

extension TokenError {
    /// `"code"`, `"stage"`, `"message"` and `"offset"`: the members a token's
    /// `error` object and a credential's begin with, in that order.
    func writeLeadingMembers(to json: inout JSONWriter) {
        json.member("code")
        json.string(code.rawValue)
        json.member("stage")
        json.string(stage.rawValue)
        json.member("message")
        json.string(message)
        json.member("offset")
        json.int(location?.byteOffset)
    }
}
