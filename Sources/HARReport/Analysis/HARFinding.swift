/// One finding of the report: one cause, the entries it names (the first one
/// where it showed, then its retries and the refusals that follow from it), and
/// what it means in words (docs/HAR.md says what fixes each kind).
package struct HARFinding: Sendable, Hashable {
    /// A stable name scripts may switch on: `TOKEN_EXPIRED`, `COOKIE_EXPIRED`,
    /// `CREDENTIAL_DROPPED`, `TOKEN_REUSED`, `CLOCK_SKEW`, `SANITIZED`, …
    package var kind: String
    package var entries: [Int]
    package var message: String
    /// True when playback broke for it; the exit status is 1 when one does.
    package var isFailure: Bool

    package init(kind: String, entries: [Int], message: String, isFailure: Bool) {
        self.kind = kind
        self.entries = entries
        self.message = message
        self.isFailure = isFailure
    }
}
