/// Something key loading skipped or found doubtful, without refusing the load.
///
/// A key directory is often shared with other files (a README, the private
/// key beside its public half, an old subdirectory), so those are skipped —
/// but never silently: each skip is a notice naming the file and why, for the
/// operator to read at start-up (the CLI prints them on stderr). A refused
/// *key* is never a notice; it is a ``KeyError`` that fails the load.
public struct KeyLoadNotice: Sendable, Equatable, CustomStringConvertible {
    /// The stable reason, for programs to switch on.
    public enum Code: String, Sendable, CaseIterable {
        /// A file in a key directory (or a PEM block in such a file) that
        /// holds no public key or certificate: skipped.
        case holdsNoKey
        /// A private key in a key directory: skipped, never trusted.
        case privateKeySkipped
        /// A FIFO, device or socket in a key directory: skipped, not read.
        case notARegularFile
        /// A subdirectory of a key directory: not entered (a note).
        case subdirectoryNotEntered
        /// The key came from a certificate whose `notAfter` has passed; the
        /// key is still trusted.
        case certificateExpired
        /// The key came from a certificate whose `notBefore` has not come;
        /// the key is still trusted.
        case certificateNotYetValid
    }

    /// How loudly to say it.
    public enum Severity: String, Sendable {
        /// Something the operator probably wants to fix or know.
        case warning
        /// Said for completeness (a subdirectory that was not entered).
        case note
    }

    /// The stable reason.
    public var code: Code
    /// The file (or directory entry) the notice is about.
    public var source: String
    /// One human line naming the source and the cause, like ``KeyError/message``.
    public var message: String

    /// `note` for a subdirectory that was not entered, `warning` otherwise.
    public var severity: Severity { code == .subdirectoryNotEntered ? .note : .warning }

    /// A notice with a message written by the caller (tests, other loaders).
    public init(code: Code, source: String, message: String) {
        self.code = code
        self.source = source
        self.message = message
    }

    /// Builds the message as `source: detail`.
    init(_ code: Code, _ source: String, _ detail: String) {
        self.init(code: code, source: source, message: "\(source): \(detail)")
    }

    /// The ``message``.
    public var description: String { message }
}
