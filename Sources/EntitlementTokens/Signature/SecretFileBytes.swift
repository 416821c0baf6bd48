/// The bytes of a secret file that are the secret: a text file (printable
/// ASCII) loses its one trailing newline (`\n` or `\r\n`), so `openssl rand
/// -hex 32 > file` and an editor's save give the same secret; any other file
/// is taken whole. The gate's session secrets and a CDN profile's
/// `secure_link` secret follow this one rule (docs/DESIGN.md#secret-files).
package enum SecretFileBytes {
    /// Fewer bytes than this is a guessable secret, refused where it is loaded.
    package static let minimumCount = 32

    /// Where a secret file is read: a relative path under systemd's
    /// `$CREDENTIALS_DIRECTORY` (where `LoadCredential=` puts the unit's
    /// secrets, readable by the service only) when that is set; as given
    /// otherwise (docs/DESIGN.md#secrets). The gate's session secrets, CAT
    /// keys and CDN profiles' keys all follow it.
    package static func path(_ path: String, credentialsDirectory: String?) -> String {
        guard !path.hasPrefix("/"), let directory = credentialsDirectory, !directory.isEmpty else { return path }
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }

    package static func secret(of file: [UInt8]) -> [UInt8] {
        var body = file[...]
        if body.last == 0x0A {
            body = body.dropLast()
            if body.last == 0x0D { body = body.dropLast() }
        }
        let isText = !body.isEmpty && body.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        return isText ? Array(body) : file
    }
}
