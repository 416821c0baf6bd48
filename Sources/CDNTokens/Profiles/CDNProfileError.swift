/// A profile that cannot be used, and where: `file:line: what is wrong`. The
/// gate refuses to start (or keeps its previous profiles on a reload), and
/// `tokeninspect` exits 2; the text names the setting and never a secret.
public struct CDNProfileError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
