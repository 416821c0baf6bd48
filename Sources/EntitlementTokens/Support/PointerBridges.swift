/// Entry points for callers that still hold an `UnsafeBufferPointer` (the
/// framing scanner on this branch); each forwards to the `Span` API.
/// Delete this file once Framing takes `Span` (branch arch-parse, issue 12).
extension SourceLocation {
    init(offset: Int, in bytes: UnsafeBufferPointer<UInt8>) {
        self.init(offset: offset, in: Span(_unsafeElements: bytes))
    }
}
