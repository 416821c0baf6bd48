extension KeyRing {
    /// Loads every key under `paths`, in order (docs/DESIGN.md#signatures-and-keys).
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
    /// - Parameter paths: key files and directories of them.
    /// - Parameter options: what else to accept (insecure sizes, RSA-PSS).
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
        try load(paths: paths, options: options, now: now, pkcs12Password: nil)
    }

    /// Loads every key under `paths` as ``load(paths:options:now:)`` does,
    /// and also reads a PKCS#12 file (`.p12`/`.pfx`, by content) named in
    /// `paths` for the public half of its private key: the form in which
    /// programmers hold the key that signs requestor IDs (docs/DESIGN.md#signed-requestor-ids). Only the
    /// public half is kept. In a key directory a PKCS#12 file is still
    /// skipped with a notice (a directory is mounted, not chosen file by file).
    ///
    /// - Parameter paths: key files and directories of them.
    /// - Parameter options: what else to accept (insecure sizes, RSA-PSS).
    /// - Parameter now: the instant certificate dates are compared with.
    /// - Parameter pkcs12Password: asked once, only when a PKCS#12 file is
    ///   named (a wrong one is `unsupportedFormat` naming the file); nil
    ///   refuses PKCS#12 files as the tokens' ring does.
    public static func load(
        paths: [String],
        options: KeyLoadingOptions = .init(),
        now: TokenTimestamp = .now(),
        pkcs12Password: (() throws(KeyError) -> KeyPassword)?
    ) throws(KeyError) -> KeyRing {
        var keys: [PublicKey] = []
        var walk = KeyFileWalk(now: now, pkcs12Password: pkcs12Password)
        try walk.walk(paths) { (decoded, source) throws(KeyError) in
            keys.append(try PublicKey(decoded, source: source, options: options))
        }
        return KeyRing(keys: keys, notices: walk.notices)
    }
}

/// Walks the key files and directories of one load (docs/DESIGN.md#signatures-and-keys), handing every
/// public key found to the caller, in order, and collecting the notices. The
/// caller decides what a key must be (the tokens' ring, or a software
/// statement's key, which may also be P-384); an error it throws fails the
/// whole load, because a verifier that starts with fewer keys than configured
/// breaks rotation only when the issuer rotates.
struct KeyFileWalk {
    let now: TokenTimestamp
    /// Opens a PKCS#12 file named as a key; nil: such a file is refused.
    let pkcs12Password: (() throws(KeyError) -> KeyPassword)?
    private var password: KeyPassword?
    private(set) var notices: [KeyLoadNotice] = []
    private var keyCount = 0

    init(now: TokenTimestamp, pkcs12Password: (() throws(KeyError) -> KeyPassword)?) {
        self.now = now
        self.pkcs12Password = pkcs12Password
    }

    typealias Consumer = (KeyDecoding.Decoded, String) throws(KeyError) -> Void

    mutating func walk(_ paths: [String], _ consume: Consumer) throws(KeyError) {
        guard !paths.isEmpty else {
            throw KeyError(code: .noKeysFound, source: "", message: "no key path given")
        }
        for path in paths {
            switch try KeyFiles.type(of: path) {
            case .regular: try loadFile(path, consume)
            case .directory: try loadDirectory(path, consume)
            case .other(let what): throw KeyError(.notARegularFile, path, KeyFiles.notRegularDetail(what))
            }
        }
    }

    private mutating func loadFile(_ path: String, _ consume: Consumer) throws(KeyError) {
        let bytes = try KeyFiles.read(path)
        if let pkcs12Password, PrivateKeyContainers.isPKCS12(bytes) {
            if password == nil { password = try pkcs12Password() }
            let tried = password ?? .empty
            let opened: (key: OpenSSLKey, certificateKey: OpenSSLKey?)
            do {
                opened = try PrivateKeyContainers.pkcs12Key(bytes, password: tried, source: path)
            } catch {
                // Say which password was tried: the empty one is the quiet default.
                throw KeyError(code: error.code, source: path, message: "\(error.message) (the password tried: \(tried.origin))")
            }
            guard let der = opened.key.subjectPublicKeyInfoDER(),
                let publicHalf = try KeyDecoding.publicKeys(from: der, source: path).first
            else {
                throw KeyError(.unsupportedFormat, path, "PKCS#12: the public half of its private key cannot be derived")
            }
            try add(
                [KeyDecoding.Decoded(key: publicHalf.key, location: "PKCS#12 (public half of its private key)")],
                source: path,
                consume
            )
            return
        }
        try add(KeyDecoding.publicKeys(from: bytes, source: path), source: path, consume)
    }

    private mutating func loadDirectory(_ path: String, _ consume: Consumer) throws(KeyError) {
        let entries = try KeyFiles.entries(ofDirectory: path)
        let keysBefore = keyCount
        /// "README.md (holds no key)", for the message when nothing is usable.
        var skippedSummary: [String] = []
        for entry in entries {
            switch entry.type {
            case .directory:
                notices.append(
                    KeyLoadNotice(
                        .subdirectoryNotEntered,
                        entry.path,
                        "subdirectory not entered; only files directly in a key directory are loaded"
                    )
                )
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
                try add(file.keys, source: entry.path, consume)
            }
        }
        guard keyCount > keysBefore else {
            if entries.isEmpty {
                throw KeyError(.noKeysFound, path, "key directory holds no key files")
            }
            let listed = skippedSummary.prefix(5).joined(separator: ", ")
            let more = skippedSummary.count > 5 ? " and \(skippedSummary.count - 5) more" : ""
            throw KeyError(.noKeysFound, path, "key directory yields no usable key; skipped \(listed)\(more)")
        }
    }

    private mutating func add(_ decoded: [KeyDecoding.Decoded], source: String, _ consume: Consumer) throws(KeyError) {
        for item in decoded {
            try consume(item, source)
            keyCount += 1
            if let validity = item.certificateValidity, !validity.contains(now) {
                let location = item.location.map { "\($0): " } ?? ""
                let trusted = "its key is trusted anyway (a certificate is a key container here, not a PKI)"
                notices.append(
                    now > validity.notAfter
                        ? KeyLoadNotice(
                            .certificateExpired,
                            source,
                            "\(location)certificate expired \(validity.notAfter.iso8601); \(trusted)"
                        )
                        : KeyLoadNotice(
                            .certificateNotYetValid,
                            source,
                            "\(location)certificate not valid before \(validity.notBefore.iso8601); \(trusted)"
                        )
                )
            }
        }
    }
}
