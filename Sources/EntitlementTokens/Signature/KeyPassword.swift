/// The password of an encrypted PEM or PKCS#12 private key (docs/DESIGN.md#key-passwords).
///
/// Never a command-line argument (it would show in `ps` and the shell's
/// history): a file (`--key-password-file`), the environment
/// (`TOKENINSPECT_KEY_PASSWORD`), else a prompt without echo on a terminal,
/// else empty. Its ``description`` never shows the password.
public struct KeyPassword: Sendable, Hashable, CustomStringConvertible {
    /// The password's bytes, as OpenSSL takes them.
    public let bytes: [UInt8]
    /// Where it came from, for messages ("file pw.txt", "TOKENINSPECT_KEY_PASSWORD").
    public let origin: String

    /// The environment variable read when no password file is given.
    public static let environmentVariable = "TOKENINSPECT_KEY_PASSWORD"

    public init(_ text: String, origin: String) {
        bytes = Array(text.utf8)
        self.origin = origin
    }

    /// No password: what an unencrypted PKCS#12 (`-passout pass:`) takes.
    public static let empty = KeyPassword("", origin: "the empty password")

    public var description: String { "a password from \(origin)" }

    /// The password by the rule above: `file` (its first line, without the
    /// line break), else `environment[TOKENINSPECT_KEY_PASSWORD]`, else
    /// `prompt()` (which the caller gives only when stdin is a terminal), else empty.
    public static func resolve(
        file: String?,
        environment: [String: String],
        prompt: (() -> String?)? = nil
    ) throws(KeyError) -> KeyPassword {
        if let file {
            let content = try KeyFiles.read(file)
            let line = content.prefix { $0 != 0x0A && $0 != 0x0D }
            return KeyPassword(String(decoding: line, as: UTF8.self), origin: "file \(file)")
        }
        if let value = environment[environmentVariable] {
            return KeyPassword(value, origin: environmentVariable)
        }
        if let prompt, let typed = prompt() {
            return KeyPassword(typed, origin: "the prompt")
        }
        return .empty
    }
}
