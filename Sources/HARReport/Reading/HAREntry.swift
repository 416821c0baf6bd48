import EntitlementTokens

/// A name and a value of a HAR entry (a header, a cookie, a query or form
/// parameter), as the file wrote them. Raw text: whoever shows it escapes it.
package struct HARField: Sendable, Hashable {
    package var name: String
    package var value: String

    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A request or response body as the HAR kept it: text (Base64 decoded when the
/// writer said so, within the limits) or the reason it is not there.
package struct HARBody: Sendable, Hashable {
    package var mimeType: String
    /// The body's text; nil when the HAR had none, it was skipped, or it is not text.
    package var text: String?
    /// Form parameters (`postData.params`).
    package var params: [HARField]
}

/// One entry of `log.entries`, read leniently: every optional field of HAR 1.2
/// may be missing, and a field of the wrong type is as if missing, so a capture
/// from any tool is shown as far as it can be (docs/DESIGN.md#reading-a-capture).
package struct HAREntry: Sendable {
    /// `#1`, `#2`, … in the file's order.
    package var number: Int
    /// `startedDateTime` as written, and as read (nil when missing or not a date).
    package var startedText: String?
    package var started: TokenTimestamp?
    package var method: String
    package var url: String
    package var requestHeaders: [HARField]
    package var requestCookies: [HARField]
    package var queryString: [HARField]
    package var postData: HARBody?
    /// 0 for a request that got no answer (a browser's failed request).
    package var status: Int
    package var responseHeaders: [HARField]
    package var responseCookies: [HARField]
    package var content: HARBody?
    /// Why the request failed, as the writer said (`_error`, mitmproxy and Chromium).
    package var error: String?
    /// What of this entry was not read, and why (a body over the limit…).
    package var skipped: [String]

    /// Reads an entry's tree; never fails (a missing field is as if empty).
    package init(number: Int, value: JSONValue, skipped: [String], limits: HARLimits) {
        self.number = number
        var skipped = skipped
        startedText = value["startedDateTime"]?.stringValue
        started = startedText.flatMap { try? TokenDateParser.parse($0).timestamp }
        if startedText != nil, started == nil { skipped.append("startedDateTime is not a date: the entry has no time") }
        let request = value["request"]
        method = request?["method"]?.stringValue ?? ""
        url = request?["url"]?.stringValue ?? ""
        requestHeaders = Self.fields(request?["headers"])
        requestCookies = Self.fields(request?["cookies"])
        queryString = Self.fields(request?["queryString"])
        postData = request?["postData"].flatMap { Self.body($0, skipped: &skipped, limits: limits) }
        let response = value["response"]
        status = response?["status"]?.int64.flatMap { Int(exactly: $0) } ?? 0
        responseHeaders = Self.fields(response?["headers"])
        responseCookies = Self.fields(response?["cookies"])
        content = response?["content"].flatMap { Self.body($0, skipped: &skipped, limits: limits) }
        error = value["_error"]?.stringValue ?? response?["_error"]?.stringValue
        self.skipped = skipped
    }

    /// The value of each header named `name` (case-insensitive), in order.
    package func requestHeader(_ name: String) -> [String] { Self.values(requestHeaders, name) }
    package func responseHeader(_ name: String) -> [String] { Self.values(responseHeaders, name) }

    static func values(_ fields: [HARField], _ name: String) -> [String] {
        let lowered = name.lowercased()
        return fields.filter { $0.name.lowercased() == lowered }.map(\.value)
    }

    private static func fields(_ value: JSONValue?) -> [HARField] {
        guard case .array(let elements)? = value else { return [] }
        return elements.compactMap { element in
            guard let name = element["name"]?.stringValue else { return nil }
            return HARField(name, element["value"]?.stringValue ?? "")
        }
    }

    private static func body(_ value: JSONValue, skipped: inout [String], limits: HARLimits) -> HARBody? {
        guard case .object = value else { return nil }
        let mimeType = value["mimeType"]?.stringValue ?? ""
        var text = value["text"]?.stringValue
        if let written = text, value["encoding"]?.stringValue == "base64" {
            // A segment's or an image's body holds no credential: not decoded at all
            // (most of a long session's capture). A text body is within the limits
            // already (a kept string is at most maxBodyBytes): decoded once, never grown.
            guard isText(mimeType) else {
                return HARBody(mimeType: mimeType, text: nil, params: fields(value["params"]))
            }
            switch try? Base64.decode(Array(written.utf8), whitespace: .lineBreaks) {
            case let decoded?:
                text = String(validating: decoded.bytes, as: UTF8.self)
            case nil:
                skipped.append("a Base64 body that is not Base64 was not read")
                text = nil
            }
        }
        return HARBody(mimeType: mimeType, text: text, params: fields(value["params"]))
    }

    /// Bodies worth looking into: an Adobe Pass answer is JSON or XML, a form is text.
    static func isText(_ mimeType: String) -> Bool {
        let type = mimeType.lowercased()
        return type.hasPrefix("text/") || type.contains("json") || type.contains("xml") || type.contains("x-www-form-urlencoded")
            || type.contains("mpegurl") || type.isEmpty
    }
}
