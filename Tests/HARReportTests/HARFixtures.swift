import Foundation

@testable import HARReport

/// HAR documents for the tests, written as a HAR writer writes them, and a
/// way to read one through the streaming reader in chunks of a chosen size.
enum HARFixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func sample(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: packageRoot.appendingPathComponent("Samples/\(name)")))
    }

    /// The JSON text of `value` (a JSON string with the escapes RFC 8259 requires).
    static func quoted(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func fields(_ pairs: [(String, String)]) -> String {
        "[" + pairs.map { "{\"name\":\(quoted($0.0)),\"value\":\(quoted($0.1))}" }.joined(separator: ",") + "]"
    }

    /// One entry as a HAR 1.2 writer writes it.
    static func entry(
        started: String = "2026-01-15T12:01:00.000Z",
        method: String = "GET",
        url: String,
        status: Int = 200,
        requestHeaders: [(String, String)] = [],
        responseHeaders: [(String, String)] = [],
        postText: String? = nil,
        body: String? = nil,
        bodyEncoding: String? = nil,
        mimeType: String = "application/json",
        extra: String = ""
    ) -> String {
        var post = ""
        if let postText { post = ",\"postData\":{\"mimeType\":\"application/json\",\"text\":\(quoted(postText))}" }
        var content = "{\"size\":0,\"mimeType\":\(quoted(mimeType))"
        if let body { content += ",\"text\":\(quoted(body))" }
        if let bodyEncoding { content += ",\"encoding\":\(quoted(bodyEncoding))" }
        content += "}"
        return """
            {"startedDateTime":\(quoted(started)),"time":1,"request":{"method":\(quoted(method)),"url":\(quoted(url)),"httpVersion":"HTTP/1.1",\
            "headers":\(fields(requestHeaders)),"queryString":[],"cookies":[],"headersSize":-1,"bodySize":-1\(post)},\
            "response":{"status":\(status),"statusText":"","httpVersion":"HTTP/1.1","headers":\(fields(responseHeaders)),"cookies":[],\
            "content":\(content),"redirectURL":"","headersSize":-1,"bodySize":-1}\(extra),"cache":{},"timings":{"send":0,"wait":1,"receive":0}}
            """
    }

    static func har(_ entries: [String]) -> [UInt8] {
        Array(
            "{\"log\":{\"version\":\"1.2\",\"creator\":{\"name\":\"test\",\"version\":\"1\"},\"entries\":[\(entries.joined(separator: ","))]}}".utf8
        )
    }

    /// Every entry of `bytes`, fed in chunks of `chunk` bytes.
    static func read(_ bytes: [UInt8], chunk: Int = 1 << 16, limits: HARLimits = HARLimits()) throws -> (entries: [HAREntry], notes: [String]) {
        var reader = HARReader(limits: limits)
        var entries: [HAREntry] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            let part = Array(bytes[offset..<end])
            try reader.feed(part.span) { entries.append($0) }
            offset = end
        }
        try reader.finish { entries.append($0) }
        return (entries, reader.notes)
    }

    static func report(_ bytes: [UInt8], keys: HARKeys = HARKeys()) throws -> HARReport {
        var reader = HARReader()
        var analysis = HARAnalysis(keys: keys)
        try reader.feed(bytes.span) { analysis.add($0) }
        try reader.finish { analysis.add($0) }
        return analysis.finish(readerNotes: reader.notes)
    }
}
