import EntitlementTokens

// TEMPORARY until manifest-hls's core lands (same shape as its ManifestError).
public struct ManifestError: Error, Sendable, Hashable {
    public let text: TerminalText
    public var reason: String { text.rendered }
    public let line: Int?
    public let offset: Int?
    public init(_ reason: TerminalText, line: Int? = nil, offset: Int? = nil) {
        self.text = reason
        self.line = line
        self.offset = offset
    }
    public func at(line: Int?, offset: Int?) -> ManifestError {
        ManifestError(text, line: self.line ?? line, offset: self.offset ?? offset)
    }
}
