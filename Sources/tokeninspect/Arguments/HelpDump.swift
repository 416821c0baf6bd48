import EntitlementTokens

/// `--experimental-dump-help`: every command, option and argument as JSON in
/// the shape of swift-argument-parser's ToolInfoV0, which `tokengate`
/// prints too, so `scripts/man-pages` writes both binaries' pages with one reader.
enum HelpDump {
    static func json(_ root: CommandSpec) -> String {
        let tool = JSONValue.object([
            member("serializationVersion", .number("0")),
            member("command", command(root, superCommands: [])),
        ])
        return String(decoding: tool.encoded, as: UTF8.self)
    }

    private static func command(_ spec: CommandSpec, superCommands: [String]) -> JSONValue {
        var members = [member("commandName", .string(spec.name)), member("abstract", .string(spec.abstract))]
        if !spec.discussion.isEmpty { members.append(member("discussion", .string(spec.discussion))) }
        if let name = spec.defaultSubcommand { members.append(member("defaultSubcommand", .string(name))) }
        if !superCommands.isEmpty { members.append(member("superCommands", .array(superCommands.map { .string($0) }))) }
        members.append(member("shouldDisplay", .bool(true)))
        let arguments =
            spec.arguments.map(argument) + spec.options.map(option)
            + [flag("version", abstract: HelpText.versionLine, short: nil), flag("help", abstract: HelpText.helpLine, short: "h")]
        members.append(member("arguments", .array(arguments)))
        if !spec.subcommands.isEmpty {
            members.append(member("subcommands", .array(spec.subcommands.map { command($0, superCommands: superCommands + [spec.name]) })))
        }
        return .object(members)
    }

    private static func option(_ spec: OptionSpec) -> JSONValue {
        if spec.kind == .flag { return flag(spec.name, abstract: spec.help, short: nil) }
        var members = [
            member("kind", .string("option")),
            member("names", .array([longName(spec.name)])),
            member("preferredName", longName(spec.name)),
            member("valueName", .string(spec.valueName)),
            member("abstract", .string(spec.help)),
            member("isOptional", .bool(!spec.isRequired)),
            member("isRepeating", .bool(spec.kind == .repeating)),
            member("parsingStrategy", .string(spec.takesDashedValue ? "unconditional" : "default")),
            member("shouldDisplay", .bool(true)),
        ]
        if let value = spec.defaultValue { members.append(member("defaultValue", .string(value))) }
        if !spec.allowedValues.isEmpty {
            let values = JSONValue.array(spec.allowedValues.map { .string($0) })
            members.append(member("allValues", values))
            members.append(member("completionKind", .object([member("list", .object([member("values", values)]))])))
        } else if spec.completion == .file {
            members.append(member("completionKind", .object([member("file", .object([member("extensions", .array([]))]))])))
        }
        return .object(members)
    }

    private static func argument(_ spec: ArgumentSpec) -> JSONValue {
        var members = [
            member("kind", .string("positional")),
            member("valueName", .string(spec.valueName)),
            member("abstract", .string(spec.help)),
            member("isOptional", .bool(true)),
            member("isRepeating", .bool(spec.isRepeating)),
            member("parsingStrategy", .string("default")),
            member("shouldDisplay", .bool(true)),
        ]
        if let value = spec.defaultValue { members.append(member("defaultValue", .string(value))) }
        if spec.completion == .input { members.append(member("completionKind", .object([member("custom", .object([]))]))) }
        return .object(members)
    }

    private static func flag(_ name: String, abstract: String, short: String?) -> JSONValue {
        let names = (short.map { [JSONValue.object([member("kind", .string("short")), member("name", .string($0))])] } ?? []) + [longName(name)]
        return .object([
            member("kind", .string("flag")),
            member("names", .array(names)),
            member("preferredName", longName(name)),
            member("valueName", .string(name)),
            member("abstract", .string(abstract)),
            member("isOptional", .bool(true)),
            member("isRepeating", .bool(false)),
            member("parsingStrategy", .string("default")),
            member("shouldDisplay", .bool(true)),
        ])
    }

    private static func longName(_ name: String) -> JSONValue {
        .object([member("kind", .string("long")), member("name", .string(name))])
    }

    private static func member(_ name: String, _ value: JSONValue) -> JSONMember { JSONMember(name: name, value: value) }
}
