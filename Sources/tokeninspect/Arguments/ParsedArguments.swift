/// What one command line gave a command: each option's values as written
/// (already checked against the option's `Value`), the positional
/// arguments, and each default where an option was not given.
struct ParsedArguments: Sendable {
    /// The root command first, the command that runs last.
    let path: [CommandSpec]
    private(set) var values: [String: [String]] = [:]
    private(set) var positionals: [String] = []

    init(path: [CommandSpec]) {
        self.path = path
    }

    var command: CommandSpec { path[path.count - 1] }

    mutating func add(_ value: String, for option: OptionSpec) {
        values[option.name, default: []].append(value)
    }

    mutating func addPositional(_ value: String) {
        positionals.append(value)
    }

    func isGiven(_ name: String) -> Bool { values[declared(name).name] != nil }

    func flag(_ name: String) -> Bool { isGiven(name) }

    /// The value given, else the declared default, else nil.
    func string(_ name: String) -> String? {
        let option = declared(name)
        return values[option.name]?.last ?? option.defaultValue
    }

    /// The value of an option that always has one: it is required (the parser
    /// refused a command line without it) or declared with a default, which
    /// is then written once, in the declaration.
    func required(_ name: String) -> String {
        guard let value = string(name) else { preconditionFailure("tokeninspect \(command.name): --\(name) has no value and no default") }
        return value
    }

    /// An `.integer` option that always has a value (checked when it was read).
    func requiredInteger(_ name: String) -> Int64 {
        guard let value = Int64(required(name)) else { preconditionFailure("tokeninspect \(command.name): --\(name) is not an integer") }
        return value
    }

    /// Every value of a repeatable option, in the order given.
    func strings(_ name: String) -> [String] { values[declared(name).name] ?? [] }

    /// An `.integer` option (checked when it was read).
    func integer(_ name: String) -> Int64? { string(name).flatMap { Int64($0) } }

    /// A `.number` option (checked when it was read).
    func number(_ name: String) -> Double? { string(name).flatMap { Double($0) } }

    /// A `.oneOf` option as the enumeration whose raw values it lists.
    func choice<Choice: RawRepresentable>(_ name: String, as _: Choice.Type) -> Choice? where Choice.RawValue == String {
        string(name).flatMap { Choice(rawValue: $0) }
    }

    /// A `.oneOf` option that always has a value, as its enumeration.
    func choice<Choice: RawRepresentable>(_ name: String) -> Choice where Choice.RawValue == String {
        guard let value = Choice(rawValue: required(name)) else {
            preconditionFailure("tokeninspect \(command.name): --\(name) lists a value its type lacks")
        }
        return value
    }

    /// The positional arguments, or the declared default when none was given.
    var arguments: [String] {
        if positionals.isEmpty, let defaultValue = command.arguments.first?.defaultValue { return [defaultValue] }
        return positionals
    }

    /// A name no option of this command declares is a mistake in this
    /// program, not in its input: it stops here rather than read as "not given".
    private func declared(_ name: String) -> OptionSpec {
        guard let option = command.option(named: name) else {
            preconditionFailure("tokeninspect \(command.name) declares no --\(name)")
        }
        return option
    }
}
