import EntitlementTokens

/// One `--cat-key` value, as `tokengate serve` and `tokeninspect har` both
/// read it: `FILE` or `FILE ID` (one space between, as a profile's `key`
/// line), the file a hex HMAC key or a PEM EC key (``CATKey/init(keyFile:id:source:)``).
/// A relative path is read under systemd's `$CREDENTIALS_DIRECTORY` when
/// that is set (docs/DESIGN.md#secrets).
package struct CATKeyFile: Sendable, Equatable {
    package var path: String
    package var id: String?

    /// A key file is a few hundred bytes; a larger one is a mistake (a log or a bundle).
    package static let maximumFileBytes = 64 * 1024

    package init(path: String, id: String?) {
        self.path = path
        self.id = id
    }

    package init(_ text: String, credentialsDirectory: String?) throws(CATKeyFileError) {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count == 1 || words.count == 2 else {
            throw CATKeyFileError("--cat-key takes FILE or 'FILE ID' (one value: quote it on the command line)")
        }
        if words.count == 2 {
            guard words[1].utf8.count <= 128, words[1].utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw CATKeyFileError("--cat-key: a key id is printable ASCII without spaces, at most 128 bytes")
            }
        }
        path = SecretFileBytes.path(String(words[0]), credentialsDirectory: credentialsDirectory)
        id = words.count == 2 ? String(words[1]) : nil
    }

    /// The key, read whole; an unreadable file or one that holds no CAT key
    /// is an error naming the file and why.
    package func load() throws(CATKeyFileError) -> CATKey {
        let contents: LibC.FileContents
        do { contents = try LibC.readRegularFile(atPath: Array(path.utf8CString), byteLimit: Self.maximumFileBytes) } catch {
            throw CATKeyFileError("--cat-key \(path): not a readable regular file of at most 64 KiB")
        }
        guard case .bytes(let bytes) = contents else {
            throw CATKeyFileError("--cat-key \(path): not a readable regular file of at most 64 KiB")
        }
        do { return try CATKey(keyFile: bytes, id: id, source: path) } catch { throw CATKeyFileError("--cat-key \(path): \(error.reason)") }
    }
}

/// Why a `--cat-key` value cannot be used, in words that name the option and the file.
package struct CATKeyFileError: Error, Sendable, Equatable {
    package let message: String

    package init(_ message: String) { self.message = message }
}
