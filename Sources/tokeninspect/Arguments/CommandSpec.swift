/// What a command accepts, declared once: parsing, `--help`, the usage line,
/// errors, shell completion and the machine-readable help that writes the man
/// page are all read from it (docs/DESIGN.md#the-command-line).
struct CommandSpec: Sendable {
    var name: String
    var abstract: String
    /// Usage lines written by hand, for a command whose forms one synopsis cannot say.
    var usage: String? = nil
    var discussion: String = ""
    var options: [OptionSpec] = []
    var arguments: [ArgumentSpec] = []
    var subcommands: [CommandSpec] = []
    var defaultSubcommand: String? = nil
    /// Checks what was given together and runs the command; nil for a group.
    var run: (@Sendable (ParsedArguments) throws -> Void)? = nil

    func subcommand(named name: String) -> CommandSpec? { subcommands.first { $0.name == name } }

    func option(named name: String) -> OptionSpec? { options.first { $0.name == name } }
}

/// A `--name` option or flag.
struct OptionSpec: Sendable {
    enum Kind: Sendable {
        /// Present or not: `--pretty`.
        case flag
        /// Takes a value; given at most once.
        case single
        /// Takes a value; may be given many times, in order.
        case repeating
    }

    /// What a value must be, checked as it is read, so a command sees only values it can use.
    enum Value: Sendable, Equatable {
        case text
        case integer
        case number
        case oneOf([String])
    }

    /// What a shell offers for the value.
    enum Completion: Sendable, Equatable {
        case none
        case file
    }

    var name: String
    var kind: Kind
    var valueName: String = ""
    var help: String
    var value: Value = .text
    /// Used when the option is not given, and shown in `--help` as "(default: …)".
    var defaultValue: String? = nil
    var isRequired = false
    /// The value is the next word even when it starts with '-' (`--leeway -5`
    /// must reach the range check, not be taken for an option).
    var takesDashedValue = false
    var completion: Completion = .none

    static func flag(_ name: String, help: String) -> OptionSpec {
        OptionSpec(name: name, kind: .flag, help: help)
    }

    static func option(
        _ name: String,
        _ valueName: String,
        help: String,
        value: Value = .text,
        default defaultValue: String? = nil,
        required: Bool = false,
        takesDashedValue: Bool = false,
        completion: Completion = .none
    ) -> OptionSpec {
        OptionSpec(
            name: name,
            kind: .single,
            valueName: valueName,
            help: help,
            value: value,
            defaultValue: defaultValue,
            isRequired: required,
            takesDashedValue: takesDashedValue,
            completion: completion
        )
    }

    static func repeating(_ name: String, _ valueName: String, help: String, completion: Completion = .none) -> OptionSpec {
        OptionSpec(name: name, kind: .repeating, valueName: valueName, help: help, completion: completion)
    }

    /// A choice of the cases of an enumeration, by their raw values.
    static func choice<Choice: CaseIterable & RawRepresentable>(
        _ name: String,
        _ valueName: String,
        _: Choice.Type,
        help: String,
        default defaultValue: Choice? = nil
    ) -> OptionSpec
    where Choice.RawValue == String {
        option(name, valueName, help: help, value: .oneOf(Choice.allCases.map(\.rawValue)), default: defaultValue?.rawValue)
    }

    var allowedValues: [String] {
        if case .oneOf(let values) = value { return values }
        return []
    }

    /// `--name <VALUE>`, as usage lines, help and errors write it.
    var label: String { kind == .flag ? "--\(name)" : "--\(name) <\(valueName)>" }
}

/// A positional argument.
struct ArgumentSpec: Sendable {
    enum Completion: Sendable, Equatable {
        case none
        /// A token, or `@PATH`: files after the `@` (InputCompletion).
        case input
    }

    var valueName: String
    var help: String
    var isRepeating = false
    var defaultValue: String? = nil
    var completion: Completion = .none

    var label: String { "<\(valueName)>" }
}
