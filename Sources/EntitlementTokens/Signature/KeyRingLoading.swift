extension KeyRing {
    /// Loads every key under `paths`, in order (SPEC §3).
    ///
    /// Each path is a file (which may hold several keys) or a directory.
    ///
    /// - A **file** must hold only public keys or certificates: the operator
    ///   named it, so anything else in it is an error.
    /// - A **directory** contributes every regular file directly in it, sorted
    ///   by the bytes of the name; hidden entries (`.name`) are left out and
    ///   symlinks followed (Kubernetes secret mounts). Files that hold no key
    ///   (a README) and private keys are skipped, each with a ``KeyLoadNotice``
    ///   naming the file and why; FIFOs, devices and sockets are skipped
    ///   unread; subdirectories are not entered (a note). A directory that
    ///   yields no usable key is `noKeysFound`.
    /// - A FIFO, device or socket given as a path is refused before it is
    ///   opened (`notARegularFile`), so a misconfigured path never hangs.
    /// - A key from a certificate outside its validity dates (at `now`) is
    ///   still trusted, with a notice: certificates are key containers here.
    ///
    /// Every *key* found must be usable: one that is corrupt, of an
    /// unsupported type, degenerate (refused whatever `options`), or too
    /// small fails the whole load, because a verifier that starts with fewer
    /// keys than configured breaks rotation only when the issuer rotates.
    ///
    /// - Parameter now: the instant certificate dates are compared with.
    /// - Throws: ``KeyError`` naming the file: `unreadable` (missing, no
    ///   permission, dangling symlink), `notARegularFile`, `noKeysFound` (no
    ///   path given, an empty file, a directory with no usable key), or any
    ///   error of ``PublicKey/keys(from:source:options:)``.
    public static func load(
        paths: [String],
        options: KeyLoadingOptions = .init(),
        now: TokenTimestamp = .now()
    ) throws(KeyError) -> KeyRing {
        guard !paths.isEmpty else {
            throw KeyError(code: .noKeysFound, source: "", message: "no key path given")
        }
        var loader = KeyRingLoader(options: options, now: now)
        for path in paths {
            switch try KeyFiles.type(of: path) {
            case .regular: try loader.loadFile(path)
            case .directory: try loader.loadDirectory(path)
            case .other(let what): throw KeyError(.notARegularFile, path, KeyFiles.notRegularDetail(what))
            }
        }
        return KeyRing(keys: loader.keys, notices: loader.notices)
    }
}

/// Walks the paths of one ``KeyRing/load(paths:options:now:)``, collecting
/// keys and notices.
private struct KeyRingLoader {
    let options: KeyLoadingOptions
    let now: TokenTimestamp
    var keys: [PublicKey] = []
    var notices: [KeyLoadNotice] = []

    init(options: KeyLoadingOptions, now: TokenTimestamp) {
        self.options = options
        self.now = now
    }

    mutating func loadFile(_ path: String) throws(KeyError) {
        try add(KeyDecoding.publicKeys(from: KeyFiles.read(path), source: path), source: path)
    }

    mutating func loadDirectory(_ path: String) throws(KeyError) {
        let entries = try KeyFiles.entries(ofDirectory: path)
        let keysBefore = keys.count
        /// "README.md (holds no key)", for the message when nothing is usable.
        var skippedSummary: [String] = []
        for entry in entries {
            switch entry.type {
            case .directory:
                notices.append(KeyLoadNotice(.subdirectoryNotEntered, entry.path,
                    "subdirectory not entered; only files directly in a key directory are loaded"))
                skippedSummary.append("\(entry.path) (a subdirectory)")
            case .other(let what):
                notices.append(KeyLoadNotice(.notARegularFile, entry.path, "skipped: \(KeyFiles.notRegularDetail(what))"))
                skippedSummary.append("\(entry.path) (\(what))")
            case .regular:
                let file = try KeyDecoding.publicKeysInDirectoryEntry(from: KeyFiles.read(entry), source: entry.path)
                for part in file.skipped {
                    let scope = file.keys.isEmpty ? "skipped" : "partly skipped"
                    notices.append(KeyLoadNotice(part.code, entry.path, "\(scope): \(part.detail)"))
                }
                if file.keys.isEmpty {
                    let what = file.skipped.contains { $0.code == .privateKeySkipped } ? "a private key" : "holds no key"
                    skippedSummary.append("\(entry.path) (\(what))")
                }
                try add(file.keys, source: entry.path)
            }
        }
        guard keys.count > keysBefore else {
            if entries.isEmpty {
                throw KeyError(.noKeysFound, path, "key directory holds no key files")
            }
            let listed = skippedSummary.prefix(5).joined(separator: ", ")
            let more = skippedSummary.count > 5 ? " and \(skippedSummary.count - 5) more" : ""
            throw KeyError(.noKeysFound, path, "key directory yields no usable key; skipped \(listed)\(more)")
        }
    }

    private mutating func add(_ decoded: [KeyDecoding.Decoded], source: String) throws(KeyError) {
        for item in decoded {
            let key = try PublicKey(item, source: source, options: options)
            keys.append(key)
            if let validity = key.certificateValidity, !validity.contains(now) {
                let location = item.location.map { "\($0): " } ?? ""
                let trusted = "its key is trusted anyway (a certificate is a key container here, not a PKI)"
                notices.append(now > validity.notAfter
                    ? KeyLoadNotice(.certificateExpired, source,
                        "\(location)certificate expired \(validity.notAfter.iso8601); \(trusted)")
                    : KeyLoadNotice(.certificateNotYetValid, source,
                        "\(location)certificate not valid before \(validity.notBefore.iso8601); \(trusted)"))
            }
        }
    }
}
