/// The set of trusted public keys a verifier accepts.
///
/// Several keys are trusted at once so that an issuer can rotate: tokens
/// signed with the old key and with the new one both verify during the
/// overlap (SPEC §3). The ring tries its keys in order and answers with the
/// first that verifies, so a caller can log which key signed.
public struct KeyRing: Sendable {
    /// The trusted keys, in the order they were given or loaded.
    public let keys: [PublicKey]

    public init(_ keys: [PublicKey]) {
        self.keys = keys
    }

    /// Loads every key under `paths`, in order.
    ///
    /// Each path is a file (which may hold several keys) or a directory. A
    /// directory contributes every regular file directly in it, sorted by
    /// name; hidden files (`.name`) and subdirectories are skipped; symlinks
    /// are followed. Every file read must hold at least one key: a stray or
    /// corrupt file in a key directory is an error naming that file, not a
    /// silent skip, because a key that quietly fails to load breaks rotation
    /// only when the new key starts signing.
    ///
    /// - Throws: ``KeyError`` naming the file: `unreadable` (missing, no
    ///   permission), `noKeysFound` (no path given, an empty file, a
    ///   directory with no files), or any error of
    ///   ``PublicKey/keys(from:source:options:)``.
    public static func load(paths: [String], options: KeyLoadingOptions = .init()) throws(KeyError) -> KeyRing {
        guard !paths.isEmpty else {
            throw KeyError(code: .noKeysFound, source: "", message: "no key path given")
        }
        var keys: [PublicKey] = []
        for path in paths {
            switch try KeyFiles.kind(of: path) {
            case .file:
                keys += try PublicKey.keys(from: KeyFiles.read(path), source: path, options: options)
            case .directory:
                let files = try KeyFiles.entries(ofDirectory: path)
                guard !files.isEmpty else {
                    throw KeyError(.noKeysFound, path, "key directory holds no key files")
                }
                for file in files {
                    keys += try PublicKey.keys(from: KeyFiles.read(file), source: file, options: options)
                }
            }
        }
        return KeyRing(keys)
    }

    /// The first trusted key that verifies `signature` over `message`, or nil.
    ///
    /// The message is hashed at most once however many keys are tried.
    /// Keys whose signature length cannot match are skipped without any
    /// OpenSSL call.
    public func verifyingKey(for signature: [UInt8], message: UnsafeRawBufferPointer) -> PublicKey? {
        signature.withUnsafeBytes { signature in
            var digest = SignedMessageDigest()
            return keys.first { $0.isValidSignature(signature, for: message, digest: &digest) }
        }
    }

    /// Convenience for a message held in an array.
    public func verifyingKey(for signature: [UInt8], message: [UInt8]) -> PublicKey? {
        message.withUnsafeBytes { verifyingKey(for: signature, message: $0) }
    }
}
