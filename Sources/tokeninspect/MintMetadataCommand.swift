import EntitlementTokens

/// `mint metadata`: user metadata for tests and samples (docs/DESIGN.md#user-metadata), the chosen
/// `data` members encrypted to the programmer's public key or certificate.
struct MintMetadataCommand {
    static let command = CommandSpec(
        name: "metadata",
        abstract: "Issue user metadata with chosen members encrypted to a public key or certificate.",
        discussion: """
            Each --data NAME=VALUE is a member of data, in order: VALUE as JSON when it is a JSON number, \
            true, false, null, array or object, else as a string. Each --encrypt NAME encrypts that member \
            (a string's UTF-8, any other value's JSON) with --scheme (default: jwe-rsa-oaep-256-a256gcm).
            """,
        options: [
            .option("encrypt-to", "PUBLIC_PEM", help: "The public key or certificate the encrypted members are encrypted to.", completion: .file),
            .repeating("data", "NAME=VALUE", help: "A data member, NAME=VALUE. Repeatable."),
            .repeating("encrypt", "NAME", help: "A data member to encrypt. Repeatable."),
            .option("updated", "SECONDS", help: "updated: epoch seconds. (default: the current time)", value: .integer),
            .option(
                "scheme",
                "SCHEME",
                help:
                    "How values are encrypted: rsa-pkcs1, rsa-oaep, rsa-oaep-256, or jwe-<alg>-<enc> such as jwe-rsa-oaep-256-a256gcm, jwe-rsa1_5-a128cbc-hs256.",
                default: "jwe-rsa-oaep-256-a256gcm"
            ),
        ],
        run: { try MintMetadataCommand($0).run() }
    )

    let encryptTo: String?
    let data: [String]
    let encrypt: [String]
    let updated: Int64?
    let scheme: String

    init(_ parsed: ParsedArguments) throws {
        encryptTo = parsed.string("encrypt-to")
        data = parsed.strings("data")
        encrypt = parsed.strings("encrypt")
        updated = parsed.integer("updated")
        scheme = parsed.required("scheme")
        try validate()
    }

    static func parseScheme(_ text: String) -> MetadataEncryptionScheme? {
        switch text {
        case "rsa-pkcs1": return .rsaPKCS1v15
        case "rsa-oaep": return .rsaOAEPSHA1
        case "rsa-oaep-256": return .rsaOAEPSHA256
        default:
            for alg in JWEKeyAlgorithm.allCases {
                for enc in JWEContentEncryption.allCases where "jwe-\(alg.rawValue)-\(enc.rawValue)".lowercased() == text.lowercased() {
                    return .jwe(alg, enc)
                }
            }
            return nil
        }
    }

    func members() throws -> [JSONMember] {
        var members: [JSONMember] = []
        for item in data {
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                throw ValidationError("--data takes NAME=VALUE, got \(TerminalText.quoted(item))")
            }
            let name = String(item[..<equals])
            let text = String(item[item.index(after: equals)...])
            let value = MintSoftwareStatementCommand.claimValue(text)
            members.append(JSONMember(name: name, value: value))
        }
        return members
    }

    func validate() throws {
        guard Self.parseScheme(scheme) != nil else {
            throw ValidationError("--scheme \(TerminalText.quoted(scheme)) is not one of the schemes listed in --help")
        }
        let names = try members().map(\.name)
        guard Set(names).count == names.count else { throw ValidationError("a --data member is given twice") }
        for name in encrypt where !names.contains(name) {
            throw ValidationError("--encrypt \(TerminalText.quoted(name)) names no --data member")
        }
        if !encrypt.isEmpty && encryptTo == nil { throw ValidationError("--encrypt needs --encrypt-to PUBLIC_PEM") }
    }

    func run() throws {
        var encryptor: MetadataEncryptor?
        do {
            if let encryptTo,
                let publicKey = try KeyRing.load(paths: [encryptTo], options: KeyLoadingOptions(allowsInsecureKeySizes: true)).keys.first
            {
                encryptor = try MetadataEncryptor(publicKey: publicKey, scheme: Self.parseScheme(scheme)!)
            }
        } catch {
            OutputStream.standardError.write("tokeninspect: error: \(error.message)\n")
            OutputStream.standardError.flush()
            throw ExitCode(2)
        }
        let seconds = updated ?? TokenTimestamp.now().millisecondsSince1970 / 1000
        do {
            let metadata = try UserMetadata.minted(
                updated: TokenTimestamp(millisecondsSince1970: seconds * 1000),
                data: try members(),
                encrypting: encrypt,
                with: encryptor
            )
            OutputStream.standardOutput.write("\(metadata.jsonText)\n")
            OutputStream.standardOutput.flush()
        } catch {
            OutputStream.standardError.write("tokeninspect: error: \(String(describing: error))\n")
            OutputStream.standardError.flush()
            throw ExitCode(2)
        }
    }
}
