import EntitlementTokens

/// The `--config FILE` format: one setting a line, named as the long option
/// without its dashes.
///
/// ```
/// # tokengate.conf
/// key = /etc/tokengate/keys
/// requestor = TNT
/// mvpd = Comcast_SSO
/// mvpd = Charter_Direct
/// resource-header = X-Token-Resource
/// allow-insecure-keys = false
/// ```
///
/// `#` starts a comment line; blank lines are skipped; a value may be put in
/// double quotes to keep leading or trailing spaces; a repeatable option is
/// repeated; a flag takes `true` or `false`. The file's settings are read
/// before the command line's, so a single-valued option on the command line
/// wins and repeatable ones add up.
enum ConfigFile {
    /// The switches among the options: they take `true` or `false` here.
    static let flags: Set<String> = ["allow-insecure-keys", "allow-any-requestor", "allow-any-resource", "allow-unbound-device", "debugger"]
    /// A settings file is small; a larger one is a mistake (a key file given by accident).
    static let maximumBytes = 64 * 1024

    /// The command-line arguments `text` stands for.
    static func arguments(from text: String, source: String) throws(GateConfigurationError) -> [String] {
        var arguments: [String] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = ConfigFile.trimmed(rawLine, alsoCarriageReturn: true)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let place = "\(source):\(number + 1)"
            guard let equals = line.firstIndex(of: "=") else {
                throw GateConfigurationError("\(place): expected `name = value`")
            }
            let name = ConfigFile.trimmed(line[..<equals])
            var value = ConfigFile.trimmed(line[line.index(after: equals)...])
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }), !name.hasPrefix("-") else {
                throw GateConfigurationError("\(place): '\(name)' is not a setting name (write it as the long option without dashes)")
            }
            guard name != "config" else { throw GateConfigurationError("\(place): a config file cannot name another one") }
            if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw GateConfigurationError("\(place): the value holds a control character")
            }
            if flags.contains(name) {
                switch value {
                case "true": arguments.append("--\(name)")
                case "false": break
                default: throw GateConfigurationError("\(place): \(name) takes true or false")
                }
            } else {
                arguments += ["--\(name)", value]
            }
        }
        return arguments
    }

    /// The subcommands that read the gate's options, and so a `--config FILE`.
    static let readers: Set<String> = ["serve", "check"]

    /// `arguments` (as given to `tokengate`, without the program name) with
    /// the settings of a `--config FILE` of `serve` or `check` put right
    /// after the subcommand, so that the command line is read after the file.
    /// A secret on the command line, or in a file others can read, stops
    /// the start (``SecretPlacement``); `permissions` gives a file's mode.
    static func expand(
        _ arguments: [String],
        read: (String) throws -> String = Self.readFile,
        permissions: (String) -> Int? = Self.permissions
    ) throws -> [String] {
        guard let serve = arguments.firstIndex(where: { readers.contains($0) }) else { return arguments }
        try SecretPlacement.checkArguments(Array(arguments[(serve + 1)...]))
        var path: String? = nil
        var index = serve + 1
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { break }
            if argument == "--config", index + 1 < arguments.count {
                path = arguments[index + 1]
                index += 2
                continue
            }
            if argument.hasPrefix("--config=") { path = String(argument.dropFirst("--config=".count)) }
            index += 1
        }
        guard let path else { return arguments }
        let text: String
        do {
            text = try read(path)
        } catch let error as GateConfigurationError {
            throw error
        } catch {
            throw GateConfigurationError("--config \(path): cannot read: \(error)")
        }
        let settings = try Self.arguments(from: text, source: path)
        try SecretPlacement.checkSettingsFile(path, settings: settings, permissions: permissions(path))
        return Array(arguments[...serve]) + settings + arguments[(serve + 1)...]
    }

    static func permissions(_ path: String) -> Int? {
        (try? LibC.status(atPath: path))?.permissions
    }

    static func readFile(_ path: String) throws -> String {
        // A FIFO or device given by mistake would block or never end: refuse it unread.
        let contents: LibC.FileContents
        do {
            guard try LibC.status(atPath: path).kind == .regular else {
                throw GateConfigurationError("--config \(path): not a regular file")
            }
            contents = try LibC.readRegularFile(atPath: Array(path.utf8CString), byteLimit: maximumBytes)
        } catch let error as LibC.SystemError {
            throw GateConfigurationError("--config \(path): cannot read: \(error.text)")
        }
        switch contents {
        case .notRegular:
            throw GateConfigurationError("--config \(path): not a regular file")
        case .tooLarge:
            throw GateConfigurationError("--config \(path): larger than \(maximumBytes / 1024) KiB: not a settings file")
        case .bytes(let bytes):
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw GateConfigurationError("--config \(path): not UTF-8 text")
            }
            return text
        }
    }

    /// `text` without the spaces and tabs around it (and a carriage return,
    /// for a line of a file written on Windows), as Foundation's
    /// `trimmingCharacters(in: .whitespaces)` trimmed: Unicode's horizontal spaces.
    static func trimmed(_ text: Substring, alsoCarriageReturn: Bool = false) -> String {
        func trims(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator || (alsoCarriageReturn && scalar == "\r")
        }
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !trims($0) }), let last = scalars.lastIndex(where: { !trims($0) }) else { return "" }
        return String(scalars[first...last])
    }
}
