import EntitlementTokens

/// Why a manifest cannot be rewritten with certainty: the gate answers 502
/// `MANIFEST_UNREADABLE` and logs it, and never passes a manifest through
/// half-rewritten (docs/DESIGN.md#tokens-inside-manifests).
public struct ManifestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What could not be read; every piece of the manifest quoted in it has
    /// been escaped on its way in.
    public let text: TerminalText
    /// ``text`` as a string, printable.
    public var reason: String { text.rendered }
    /// The 1-based line of an HLS playlist (or of an MPD, where the XML reader knows it).
    public let line: Int?
    /// The byte offset into the manifest where the problem starts, where known.
    public let offset: Int?

    public init(_ reason: TerminalText, line: Int? = nil, offset: Int? = nil) {
        self.text = reason
        self.line = line
        self.offset = offset
    }

    /// The same reason, placed at `line` and `offset` (a reader adds where it was).
    public func at(line: Int?, offset: Int?) -> ManifestError {
        ManifestError(text, line: self.line ?? line, offset: self.offset ?? offset)
    }

    /// `line 12: reason`, as a compiler writes it.
    public var description: String {
        if let line { return "line \(line): \(reason)" }
        if let offset { return "byte \(offset): \(reason)" }
        return reason
    }
}
