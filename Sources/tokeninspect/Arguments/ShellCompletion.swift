/// Shell completion, answered by the binary itself: the scripts that
/// `--generate-completion-script` prints (and `completions/` holds) pass the
/// words being typed to `tokeninspect ---complete CWORD WORD...` and offer
/// what it prints, so the options a shell offers are always the binary's own.
///
/// The reply's first line says what to offer: `:files` (the shell's own file
/// completion, for an option that takes a path) or `:words`, the candidates
/// on the lines after it, already matched against the word being typed.
enum ShellCompletion {
    static let requestWord = "---complete"
    static let shells = ["bash", "zsh", "fish"]

    static func candidates(_ request: [String], root: CommandSpec) -> [String] {
        guard request.count >= 2, let cword = Int(request[0]) else { return [":words"] }
        let line = Array(request.dropFirst())
        guard cword >= 1, cword <= line.count else { return [":words"] }
        let current = cword < line.count ? line[cword] : ""
        var path = [root]
        var index = 1
        while index < cword, let subcommand = path[path.count - 1].subcommand(named: line[index]) {
            path.append(subcommand)
            index += 1
        }
        var command = path[path.count - 1]
        var offered: [String] = []
        if !command.subcommands.isEmpty {
            guard let name = command.defaultSubcommand, let fallback = command.subcommand(named: name) else {
                return [":words"] + command.subcommands.map(\.name).filter { index == cword && $0.hasPrefix(current) }
            }
            if index == cword { offered = command.subcommands.map(\.name).filter { $0.hasPrefix(current) } }
            command = fallback
        }
        // The value of the option before the cursor (bash splits `--key=` into `--key`, `=`).
        var before = cword - 1
        if before > index, line[before] == "=" { before -= 1 }
        let optionWord = before >= index ? line[before] : ""
        if optionWord.hasPrefix("--"), let option = command.option(named: String(optionWord.dropFirst(2))), option.kind != .flag {
            if option.completion == .file { return [":files"] }
            return [":words"] + option.allowedValues.filter { $0.hasPrefix(current) }
        }
        if current.hasPrefix("-") {
            let given = Set(line[index..<cword])
            let names = command.options.filter { $0.kind == .repeating || !given.contains("--\($0.name)") }.map { "--\($0.name)" } + ["--help"]
            return [":words"] + offered + names.filter { $0.hasPrefix(current) }
        }
        if command.arguments.first?.completion == .input {
            return [":words"] + offered + InputCompletion.candidates(line, cword, current)
        }
        return [":words"] + offered
    }

    static func script(for shell: String, root: CommandSpec) -> String? {
        let name = root.name
        let function = "_" + name.map { $0.isLetter || $0.isNumber ? $0 : "_" }.map(String.init).joined()
        switch shell {
        case "bash":
            return """
                #!/bin/bash
                # Completion for \(name): the binary answers (\(name) \(requestWord) CWORD WORD...).

                \(function)() {
                    local -a reply
                    # mapfile, not reply=($(…)): a candidate is one line, never split or globbed.
                    mapfile -t reply < <("${COMP_WORDS[0]}" \(requestWord) "${COMP_CWORD}" "${COMP_WORDS[@]}" 2>/dev/null)
                    if [[ "${reply[0]}" == ":files" ]]; then
                        # readline's own file completion: one candidate a file, quoted as it
                        # inserts it (compgen's lines would split a name holding a newline).
                        COMPREPLY=()
                        compopt -o default 2>/dev/null
                        return
                    fi
                    COMPREPLY=("${reply[@]:1}")
                    # A directory is completed further, not ended with a space.
                    local candidate
                    for candidate in "${COMPREPLY[@]}"; do
                        [[ "${candidate}" == */ ]] && compopt -o nospace && break
                    done
                }

                complete -F \(function) \(name)

                """
        case "zsh":
            return """
                #compdef \(name)
                # Completion for \(name): the binary answers (\(name) \(requestWord) CWORD WORD...).

                \(function)() {
                    local -a reply directories others
                    reply=("${(@f)$("${words[1]}" \(requestWord) "$((CURRENT - 1))" "${words[@]}" 2>/dev/null)}")
                    if [[ "${reply[1]}" == ":files" ]]; then
                        _files
                        return
                    fi
                    local candidate
                    for candidate in "${(@)reply[2,-1]}"; do
                        [[ -z "${candidate}" ]] && continue
                        if [[ "${candidate}" == */ ]]; then directories+=("${candidate}"); else others+=("${candidate}"); fi
                    done
                    (( ${#directories} )) && compadd -Q -S '' -- "${directories[@]}"
                    (( ${#others} )) && compadd -Q -- "${others[@]}"
                    return 0
                }

                \(function) "$@"

                """
        case "fish":
            return """
                # Completion for \(name): the binary answers (\(name) \(requestWord) CWORD WORD...).

                function \(function)
                    set -l words (commandline -opc) (commandline -ct)
                    set -l reply (command $words[1] \(requestWord) (math (count $words) - 1) $words 2>/dev/null)
                    if test "$reply[1]" = ":files"
                        __fish_complete_path (commandline -ct)
                        return
                    end
                    set -e reply[1]
                    printf '%s\\n' $reply
                end

                complete -c \(name) -f -a '(\(function))'

                """
        default:
            return nil
        }
    }
}
