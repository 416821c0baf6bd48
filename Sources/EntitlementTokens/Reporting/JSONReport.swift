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
        json.raw("[")
        for (index, report) in reports.enumerated() {
            json.raw(index == 0 ? "\n" : ",\n")
            report.write(to: &json, showSignedBytes: showSignedBytes, showDecodedXML: showDecodedXML)
        }
        json.raw(reports.isEmpty ? "]\n" : "\n]\n")
        return json.bytes
    }

    func write(to json: inout JSONWriter, showSignedBytes: Bool, showDecodedXML: Bool = false) {
        json.beginObject()
        json.member("input"); json.int(input)
        json.member("source"); json.string(source)
        json.member("line"); json.int(self.line)
        json.member("status"); json.string(status?.rawValue)
        json.member("reason"); json.string(reason, repeating: 0)
        let token = self.token ?? verdict?.token
        json.member("kind"); json.string(token?.kind.rawValue)
        json.member("root"); json.string(token?.root)
        let model = token?.token  // once: each `.token` read copies the model
        json.member("issuedAt"); json.string(model?.issuedAt?.iso8601)
        json.member("expiresAt"); json.string(model?.expiresAt.iso8601)
        json.member("requestorID"); json.string(model?.requestorID)
        json.member("resourceID"); json.string(model?.resourceID, repeating: 1)
        json.member("resourceRSS")
        // Only a resource that looks like RSS is read (once, lazily); a bare id is null.
        if let rss = token?.mediaRSS {
            json.beginObject()
            json.member("channel"); json.string(rss.channelTitle)
            json.member("itemTitle"); json.string(rss.itemTitle)
            json.member("guid"); json.string(rss.itemGUID)
            json.member("rating"); json.string(rss.rating)
            json.endObject()
        } else {
            json.null()
        }
        json.member("mvpdID"); json.string(model?.mvpdID)
        json.member("fingerprint"); json.string(model?.fingerprint)
        json.member("fields")
        json.beginObject()
        if let token {
            writeFields(token.fields, to: &json)
        }
        json.endObject()
        json.member("transport"); json.string(token?.transport.description)
        json.member("signature")
        if let token {
            json.beginObject()
            json.member("form"); json.string(token.frame.signatureForm.rawValue)
            json.member("placement"); json.string(token.frame.signaturePlacement.rawValue)
            json.member("bytes"); json.int(token.signatureBytes?.count)
            // The Base64 text as it stands between the tags, white space trimmed.
            json.member("value"); json.string(utf8: token.trimmedSignatureText)
            json.endObject()
        } else {
            json.null()
        }
        json.member("verifiedBy"); json.string(verdict?.key?.description, repeating: 2)
        json.member("checksRun")
        // The two lists, not the whole verdict: binding the verdict would copy
        // (and retain) every reference it holds, once per token.
        if let checksRun = verdict?.checksRun, let checksSkipped = verdict?.checksSkipped {
            json.beginArray()
            for check in checksRun {
                json.element(); json.string(check.rawValue)
            }
            json.endArray()
            json.member("checksSkipped")
            json.beginArray()
            for skipped in checksSkipped {
                json.element()
                json.beginObject()
                json.member("check"); json.string(skipped.check.rawValue)
                json.member("reason"); json.string(skipped.reason)
                json.member("requested"); json.bool(skipped.requested)
                json.endObject()
            }
            json.endArray()
        } else {
            json.null()
            json.member("checksSkipped"); json.null()
        }
        json.member("error")
        if let error = error ?? verdict?.formatError {
            json.beginObject()
            json.member("code"); json.string(error.code.rawValue)
            json.member("stage"); json.string(error.stage.rawValue)
            json.member("message"); json.string(error.message)
            json.member("offset"); json.int(error.location?.byteOffset)
            json.member("line"); json.int(error.location?.line)
            json.member("column"); json.int(error.location?.column)
            json.member("fieldsBeforeError")
            json.beginObject()
            writeFields(error.fieldsBeforeError, to: &json)
            json.endObject()
            json.endObject()
        } else {
            json.null()
        }
        json.member("warnings")
        json.beginArray()
        for warning in token?.warnings ?? [] {
            json.element(); json.string(warning)
        }
        json.endArray()
        json.member("envelope")
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
            json.member("signedBytes"); json.string(token.map { String(decoding: $0.signedBytes, as: UTF8.self) })
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
                json.member("beforeSigned"); json.string(String(decoding: xml[..<signed.lowerBound], as: UTF8.self))
                json.member("signed"); json.string(String(decoding: xml[signed], as: UTF8.self))
                json.member("afterSigned"); json.string(String(decoding: xml[signed.upperBound...], as: UTF8.self))
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
    private func writeFields(_ fields: [TokenField], to json: inout JSONWriter) {
        // Usually no path repeats: then the fields go out in order, no grouping needed.
        guard TokenFieldGroup.hasRepeatedPath(fields) else {
            // By index: `for field in fields` would copy (retain) both strings of each field.
            for index in fields.indices {
                json.key(fields[index].path); json.string(fields[index].value, repeating: 3 + index)
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
                    json.element(); json.string(value)
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
