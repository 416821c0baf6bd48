extension CDNPaste {
    /// One paste of a file holding several, and the line it starts on.
    public struct Record: Sendable, Hashable {
        public var line: Int
        public var text: String

        public init(line: Int, text: String) {
            self.line = line
            self.text = text
        }
    }

    /// Cuts a file or stdin into pastes, by one rule a person can follow:
    /// a blank line ends a paste; a URL line or a bare token line starts a
    /// new one; `Cookie:`, `Set-Cookie:` and header lines join the paste
    /// before them. So a file of URLs, one a line, is one paste a line, and
    /// what `tokeninspect mint cdn` prints (the URL, then its `Set-Cookie:`
    /// lines) is one paste whose URL is the request.
    public static func records(in text: String) -> [Record] {
        var records: [Record] = []
        forEachRecord(in: text) {
            records.append($0)
            return true
        }
        return records
    }

    /// The pastes of `text` in order, handed to `body` one at a time until it
    /// returns false: telling whether an input is CDN tokens reads its first
    /// paste only, however many lines follow.
    static func forEachRecord(in text: String, _ body: (Record) -> Bool) {
        let bytes = Array(text.utf8)
        var current: [ArraySlice<UInt8>] = []
        var start = 0
        func close() -> Bool {
            defer { current = [] }
            guard !current.isEmpty else { return true }
            return body(Record(line: start, text: String(decoding: Array(current.joined(separator: [0x0A])), as: UTF8.self)))
        }
        // Line by line as `split(separator: 0x0A, omittingEmptySubsequences: false)`
        // cuts them, without the list of every line.
        var lineStart = 0
        var lineNumber = 0
        while lineStart <= bytes.count {
            let end = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.count
            let line = bytes[lineStart..<end]
            lineNumber += 1
            lineStart = end + 1
            switch classify(line) {
            case .blank:
                guard close() else { return }
                continue
            case .url, .bare:
                guard close() else { return }
            case .header:
                break
            }
            if current.isEmpty { start = lineNumber }
            current.append(line)
        }
        _ = close()
    }

    /// True when `text` (its first paste) has a CDN token's form: a
    /// `Cookie:`, `Set-Cookie:` or CAT header line, a URL whose query shows a
    /// CDN token (``CDNTokenLocator/showsCDNToken(queryNames:)``), a bare
    /// EdgeAuth token, or a bare CAT (text whose bytes
    /// start a COSE message). `tokeninspect` decides by this whether an
    /// INPUT is read as CDN tokens; an entitlement token has none of these forms.
    public static func hasCDNForm(_ text: String) -> Bool {
        var firstRecord: Record?
        forEachRecord(in: String(decoding: text.utf8.prefix(maximumBytes), as: UTF8.self)) {
            firstRecord = $0
            return false
        }
        guard let first = firstRecord else { return false }
        for line in lines(of: Array(first.text.utf8)) {
            switch classify(line) {
            case .blank: continue
            case .header(let name, _):
                if ["cookie", "set-cookie", catHeader].contains(name.lowercased()) { return true }
            case .url:
                let text = String(decoding: Array(line).trimmingASCIIWhitespace(), as: UTF8.self)
                let url: CDNURL
                do throws(CDNRefusal) { url = try CDNURL(parsing: text) } catch {
                    // A token on a URL whose path is refused is still a CDN paste: the reader answers INVALID_URL for it.
                    guard error.status == .invalidURL else { continue }
                    let query = text.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
                    if CDNTokenLocator.showsCDNToken(queryNames: Set(CloudFrontSignedURL.queryPairs(query: query).map(\.name))) { return true }
                    continue
                }
                if CDNTokenLocator.showsCDNToken(queryNames: Set(CloudFrontSignedURL.queryPairs(of: url).map(\.name))) { return true }
            case .bare(let token):
                if CDNTokenLocator.bareKind(token) != nil { return true }
            }
        }
        return false
    }
}
