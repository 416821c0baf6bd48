import EntitlementTokens

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `metadata`: shows user metadata (docs/DESIGN.md#user-metadata) and, with the programmer's
/// private key, decrypts its encrypted values, each beside its ciphertext.
/// Decryption is local: the gate and the debugger never decrypt.
struct MetadataCommand {
    static let command = CommandSpec(
        name: "metadata",
        abstract: "Show user metadata and decrypt its encrypted values with the programmer's private key.",
        discussion: """
            INPUT is the metadata JSON in any pasted form (raw, quoted, Base64, in a URL or JSON body), \
            @PATH, or - for stdin. With --decrypt-key, each encrypted value (a JWE, or Base64 of an RSA \
            ciphertext: OAEP-SHA-256, OAEP-SHA-1 or PKCS#1 v1.5) is shown decrypted, or named with the \
            reason it does not decrypt. The key is PEM, DER, encrypted PEM or PKCS#12; its password comes \
            from --key-password-file, else TOKENINSPECT_KEY_PASSWORD, else a prompt on a terminal, else \
            is empty — never an argument.

            Exit status: 0 decoded (and every value decrypted), 1 not metadata or a value did not \
            decrypt, 2 unreadable input or key.
            """,
        options: [
            .option("decrypt-key", "FILE", help: "The programmer's private key (PEM, DER, encrypted PEM, PKCS#12).", completion: .file),
            .option("key-password-file", "FILE", help: "A file whose first line is the key's password.", completion: .file),
            .choice("format", "format", MetadataFormat.self, help: "Output format: text or json.", default: .text),
        ],
        arguments: [ArgumentSpec(valueName: "INPUT", help: "The metadata, @PATH, or - for stdin.", defaultValue: "-")],
        run: { try MetadataCommand($0).run() }
    )

    let decryptKey: String?
    let keyPasswordFile: String?
    let format: MetadataFormat
    let input: String

    enum MetadataFormat: String, CaseIterable { case text, json }

    init(_ parsed: ParsedArguments) throws {
        decryptKey = parsed.string("decrypt-key")
        keyPasswordFile = parsed.string("key-password-file")
        format = parsed.choice("format")
        input = parsed.arguments[0]
        try validate()
    }

    func validate() throws {
        if keyPasswordFile != nil && decryptKey == nil {
            throw ValidationError("--key-password-file opens the key of --decrypt-key, which is not given")
        }
        if input == "@" { throw ValidationError("'@' needs a path: @PATH") }
    }

    func run() throws {
        let bytes: [UInt8]
        do {
            bytes = try Self.read(input)
        } catch {
            OutputStream.standardError.write("tokeninspect: \(String(describing: error))\n")
            OutputStream.standardError.flush()
            throw ExitCode(2)
        }
        var decryptor: MetadataDecryptor?
        if let decryptKey {
            do {
                let prompt: (() -> String?)? = isatty(STDIN_FILENO) == 1 && input != "-" ? { Self.promptWithoutEcho(for: decryptKey) } : nil
                let password = try KeyPassword.resolve(file: keyPasswordFile, environment: Self.environment(), prompt: prompt)
                let key = try ProgrammerPrivateKey(path: decryptKey, password: password)
                SampleKeyWarning.write([SampleKeyWarning.Key(name: SampleKeys.name(of: key.publicKey), source: decryptKey)], use: .decrypts)
                decryptor = MetadataDecryptor(key: key)
            } catch {
                OutputStream.standardError.write("tokeninspect: \(TerminalText(escaping: String(describing: error)))\n")
                OutputStream.standardError.flush()
                throw ExitCode(2)
            }
        }
        let metadata: UserMetadata
        do {
            metadata = try Self.decode(bytes)
        } catch {
            switch format {
            case .text:
                OutputStream.standardOutput.write("INVALID_TOKEN_FORMAT  \(TerminalText(escaping: error.description))\n")
                OutputStream.standardOutput.flush()
            case .json:
                let report = JSONValue.object([
                    JSONMember(name: "kind", value: .string("user-metadata")),
                    JSONMember(name: "status", value: .string("INVALID_TOKEN_FORMAT")),
                    JSONMember(name: "reason", value: .string(error.description)),
                ])
                Self.writeJSON(report)
            }
            throw ExitCode(1)
        }
        let values = decryptor?.decrypt(metadata)
        switch format {
        case .text: OutputStream.standardOutput.write(Self.text(metadata, decrypted: values))
        case .json: Self.writeJSON(Self.json(metadata, decrypted: values))
        }
        OutputStream.standardOutput.flush()
        if values?.contains(where: { !Self.isDecrypted($0) }) == true { throw ExitCode(1) }
    }

    static func isDecrypted(_ value: DecryptedMetadataValue) -> Bool {
        if case .decrypted = value.outcome { return true }
        return false
    }

    /// The metadata document in any pasted form, unwrapped by the credential detection.
    static func decode(_ bytes: [UInt8]) throws(TokenError) -> UserMetadata {
        try UserMetadata(pasted: bytes)
    }

    // MARK: - Output

    static func text(_ metadata: UserMetadata, decrypted: [DecryptedMetadataValue]?) -> TerminalText {
        var out: TerminalText = "user metadata\n"
        if let updated = metadata.updated { out += "  updated    \(updated.iso8601)\n" }
        if !metadata.encryptedNames.isEmpty {
            out += "  encrypted  \(TerminalText.joined(metadata.encryptedNames.map { TerminalText(escaping: $0) }, separator: ", "))\n"
        }
        out += "  data\n"
        for member in metadata.data {
            let name = TerminalText(escaping: member.name)
            switch member.value {
            case .encrypted(let ciphertext):
                out += "    \(name)  [encrypted] \(TerminalText(escaping: ciphertext))\n"
                if let value = decrypted?.first(where: { $0.name == member.name }) {
                    switch value.outcome {
                    case .decrypted(let plaintext, let scheme):
                        let shown: TerminalText = value.plaintext.map { Self.quoted($0) } ?? "\(plaintext.count) bytes that are not UTF-8"
                        out += "      decrypted (\(scheme.description)): \(shown)\n"
                    case .failed(let reason):
                        out += "      does not decrypt: \(TerminalText(escaping: reason))\n"
                    }
                }
            case .list(let items):
                out += "    \(name)  \(TerminalText.joined(items.map { Self.quoted($0) }, separator: ", "))\n"
            case .text(let text):
                out += "    \(name)  \(Self.quoted(text))\n"
            case .ratings(let ratings):
                out +=
                    "    \(name)  \(TerminalText.joined(ratings.map { "\($0.system)=\(Self.quoted($0.rating))" as TerminalText }, separator: ", "))\n"
            case .verbatim(let value):
                out += "    \(name)  \(TerminalText(escaping: String(decoding: value.encoded, as: UTF8.self)))\n"
            }
        }
        for member in metadata.otherMembers {
            out += "  \(TerminalText(escaping: member.name))  \(TerminalText(escaping: String(decoding: member.value.encoded, as: UTF8.self)))\n"
        }
        if decrypted == nil, !metadata.encryptedMembers.isEmpty {
            out += "  (encrypted values not decrypted: give the programmer's private key with --decrypt-key)\n"
        }
        return out
    }

    /// `'text'`, escaped.
    static func quoted(_ text: String) -> TerminalText { "'\(text)'" }

    static func json(_ metadata: UserMetadata, decrypted: [DecryptedMetadataValue]?) -> JSONValue {
        var members = [
            JSONMember(name: "kind", value: .string("user-metadata")),
            JSONMember(name: "status", value: .string("DECODED")),
            JSONMember(name: "updatedAt", value: metadata.updated.map { .string($0.iso8601) } ?? .null),
            JSONMember(name: "metadata", value: metadata.json),
        ]
        if let decrypted {
            members.append(
                JSONMember(
                    name: "decrypted",
                    value: .array(
                        decrypted.map { value in
                            var entry = [
                                JSONMember(name: "name", value: .string(value.name)),
                                JSONMember(name: "ciphertext", value: .string(value.ciphertext)),
                            ]
                            switch value.outcome {
                            case .decrypted(let plaintext, let scheme):
                                entry.append(JSONMember(name: "scheme", value: .string(scheme.description)))
                                entry.append(JSONMember(name: "value", value: value.plaintext.map { .string($0) } ?? .null))
                                if value.plaintext == nil {
                                    entry.append(
                                        JSONMember(
                                            name: "valueHex",
                                            value: .string(
                                                plaintext.map {
                                                    String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16)
                                                }.joined()
                                            )
                                        )
                                    )
                                }
                            case .failed(let reason):
                                entry.append(JSONMember(name: "error", value: .string(reason)))
                            }
                            return .object(entry)
                        }
                    )
                )
            )
        }
        return .object(members)
    }

    static func writeJSON(_ value: JSONValue) {
        let bytes = value.encoded + [0x0A]
        bytes.withUnsafeBytes { OutputStream.standardOutput.write($0) }
        OutputStream.standardOutput.flush()
    }

    // MARK: - Input, password

    static func environment() -> [String: String] {
        guard let value = getenv(KeyPassword.environmentVariable) else { return [:] }
        return [KeyPassword.environmentVariable: String(cString: value)]
    }

    /// Reads the password from the terminal with echo off (termios), restoring it after.
    static func promptWithoutEcho(for path: String) -> String? {
        OutputStream.standardError.write("Password for \(TerminalText(escaping: path)): ")
        OutputStream.standardError.flush()
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            OutputStream.standardError.write("\n")
        }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 4096, Glibc.read(STDIN_FILENO, &byte, 1) == 1, byte != 0x0A, byte != 0x0D { line.append(byte) }
        return String(decoding: line, as: UTF8.self)
    }

    struct Unreadable: Error, CustomStringConvertible { var description: String }

    static let maximumBytes = 1 << 20

    /// The INPUT's bytes: the argument itself, a file (@PATH) or stdin (-), at most 1 MiB.
    static func read(_ input: String) throws -> [UInt8] {
        let descriptor: Int32
        let name: String
        if input == "-" {
            descriptor = STDIN_FILENO
            name = "stdin"
        } else if input.hasPrefix("@") {
            name = String(input.dropFirst())
            descriptor = open(name, O_RDONLY)
            guard descriptor >= 0 else {
                throw Unreadable(description: "cannot read \(TerminalText(escaping: name)): \(String(cString: strerror(errno)))")
            }
        } else {
            return Array(input.utf8)
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Unreadable(description: "cannot read \(TerminalText(escaping: name)): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += chunk[..<count]
            guard bytes.count <= maximumBytes else {
                throw Unreadable(description: "\(TerminalText(escaping: name)) is larger than \(maximumBytes) bytes; user metadata is small")
            }
        }
        guard !bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            throw Unreadable(description: "\(TerminalText(escaping: name)) is empty")
        }
        return bytes
    }
}
