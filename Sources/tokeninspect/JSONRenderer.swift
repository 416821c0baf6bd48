import EntitlementTokens

/// The JSON object of SPEC §6 for one token, keys in a fixed order and every
/// key always present (null when unknown), so scripts can rely on the shape.
enum JSONRenderer {
    static func object(_ outcome: Outcome, showSignedBytes: Bool) -> String {
        var json = JSONObject()
        json.add("input", outcome.input)
        json.add("source", outcome.source)
        json.add("line", outcome.line)
        json.add("status", outcome.status?.rawValue)
        json.add("reason", outcome.reason)
        let token = outcome.token ?? outcome.verdict?.token
        json.add("kind", token?.kind.rawValue)
        json.add("root", token?.root)
        json.add("issuedAt", token?.token.issuedAt?.iso8601)
        json.add("expiresAt", token?.token.expiresAt.iso8601)
        json.add("requestorID", token?.token.requestorID)
        json.add("resourceID", token?.token.resourceID)
        json.add("mvpdID", token?.token.mvpdID)
        json.add("fingerprint", token?.token.fingerprint)
        var fields = JSONObject()
        if let token {
            // A path that occurs more than once (a list, or an unknown repeated
            // element) maps to an array of its values in document order.
            var order: [String] = []
            var values: [String: [String]] = [:]
            for field in token.fields {
                if values[field.path] == nil { order.append(field.path) }
                values[field.path, default: []].append(field.value)
            }
            for path in order {
                let list = values[path]!
                if list.count == 1 { fields.add(path, list[0]) } else { fields.addRaw(path, JSONObject.array(list.map(JSONObject.quoted))) }
            }
        }
        json.addRaw("fields", fields.text)
        json.add("transport", token?.transport.description)
        if let token {
            var signature = JSONObject()
            signature.add("form", token.frame.signatureForm.rawValue)
            signature.add("placement", token.frame.signaturePlacement.rawValue)
            signature.add("bytes", token.signatureByteCount)
            json.addRaw("signature", signature.text)
        } else {
            json.addRaw("signature", "null")
        }
        json.add("verifiedBy", outcome.verdict?.key?.description)
        if let verdict = outcome.verdict {
            json.addRaw("checksRun", JSONObject.array(verdict.checksRun.map { JSONObject.quoted($0.rawValue) }))
            json.addRaw("checksSkipped", JSONObject.array(verdict.checksSkipped.map {
                var skipped = JSONObject()
                skipped.add("check", $0.check.rawValue)
                skipped.add("reason", $0.reason)
                return skipped.text
            }))
        } else {
            json.addRaw("checksRun", "null")
            json.addRaw("checksSkipped", "null")
        }
        if let error = outcome.error ?? outcome.verdict?.formatError {
            var object = JSONObject()
            object.add("code", error.code.rawValue)
            object.add("stage", error.stage.rawValue)
            object.add("message", error.message)
            object.add("offset", error.location?.byteOffset)
            object.add("line", error.location?.line)
            object.add("column", error.location?.column)
            json.addRaw("error", object.text)
        } else {
            json.addRaw("error", "null")
        }
        json.addRaw("warnings", JSONObject.array((token?.warnings ?? []).map(JSONObject.quoted)))
        if let envelope = token?.envelope {
            var object = JSONObject()
            for field in envelope.fields { object.add(field.key, field.value) }
            json.addRaw("envelope", object.text)
        } else {
            json.addRaw("envelope", "null")
        }
        if showSignedBytes {
            json.add("signedBytes", token.map { String(decoding: $0.signedBytes, as: UTF8.self) })
        }
        return json.text
    }
}

/// A JSON object written in insertion order.
struct JSONObject {
    private var members: [String] = []

    mutating func add(_ key: String, _ value: String?) {
        addRaw(key, value.map(Self.quoted) ?? "null")
    }

    mutating func add(_ key: String, _ value: Int?) {
        addRaw(key, value.map(String.init) ?? "null")
    }

    mutating func addRaw(_ key: String, _ json: String) {
        members.append(Self.quoted(key) + ":" + json)
    }

    var text: String { "{" + members.joined(separator: ",") + "}" }

    static func array(_ elements: [String]) -> String { "[" + elements.joined(separator: ",") + "]" }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case let control where control.value < 0x20 || control.value == 0x7F:
                let hex = String(control.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
