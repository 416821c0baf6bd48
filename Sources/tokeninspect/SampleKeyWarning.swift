import EntitlementTokens

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one warning `tokeninspect` gives when a key it verifies or decrypts
/// with is one of the repository's sample keys (``SampleKeys``) found
/// outside the `Samples` folder: someone copied a test key into a real
/// deployment, and its private half is published (docs/DESIGN.md#sample-keys).
/// Every kind the CLI checks comes here: tokens, software statements, signed
/// requestor IDs, CDN tokens, and the key that decrypts user metadata. The
/// samples where they ship stay quiet (the commands of Samples/README.md).
enum SampleKeyWarning {
    enum Use {
        case verifies, decrypts
    }

    /// A key read from `source` that is the sample key `name` (nil: not a sample key).
    struct Key {
        var name: String?
        var source: String
    }

    /// The warning for `key`, or nil when it is no sample key or is where the samples ship.
    static func text(_ key: Key, use: Use) -> String? {
        guard let name = key.name, !absolutePath(key.source).contains("/Samples/") else { return nil }
        let consequence = use == .verifies ? "so anyone can mint tokens it verifies" : "so anyone can read what is encrypted to it"
        return "\(TerminalText(escaping: key.source)) is the repository's sample key \(name): its private key is published, \(consequence)"
    }

    /// Writes the warning of each sample key among `keys` to stderr, once per file and key.
    static func write(_ keys: [Key], use: Use = .verifies) {
        var written = Set<String>()
        for key in keys {
            guard let warning = text(key, use: use), written.insert(warning).inserted else { continue }
            OutputStream.standardError.write("tokeninspect: warning: \(warning)\n")
        }
        OutputStream.standardError.flush()
    }

    /// `path` with symbolic links and `..` resolved; as given when it cannot be.
    static func absolutePath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
