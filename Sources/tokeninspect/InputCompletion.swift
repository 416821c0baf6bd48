#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Shell completion of an INPUT: after `@`, the paths of files (`@PATH`,
/// docs/DESIGN.md#inputs-and-streaming), kept behind their `@`. Called by the completion scripts through
/// `tokeninspect ---complete` (ShellCompletion); a token being typed gets nothing.
///
/// A candidate is one line of the reply, and the shell writes it to the
/// terminal and into the command line: a name holding a control character
/// (a newline would make a second candidate, `a\n--insecure-skip-signature`;
/// an escape sequence would reach the terminal) or bytes that are not UTF-8
/// is skipped, never offered escaped, since the escaped text names no file
/// (docs/CLI.md, "Completion").
enum InputCompletion {
    /// Most candidates offered: a directory of a million files must not stall the shell.
    static let maxCandidates = 1000

    @Sendable static func candidates(_ arguments: [String], _ index: Int, _ prefix: String) -> [String] {
        let at: String
        let typed: String
        if prefix.hasPrefix("@") {
            at = "@"
            typed = String(prefix.dropFirst())
        } else if index > 0, index - 1 < arguments.count, arguments[index - 1] == "@" {
            // bash breaks COMP_WORDS at '@' (COMP_WORDBREAKS), but readline keeps
            // the '@' in the word it replaces (rl_special_prefixes): answer with it.
            at = "@"
            typed = prefix
        } else {
            return []
        }
        let slash = typed.lastIndex(of: "/")
        let directory = slash.map { String(typed[...$0]) } ?? ""
        let namePrefix = slash.map { String(typed[typed.index(after: $0)...]) } ?? typed
        guard let stream = opendir(directory.isEmpty ? "." : directory) else { return [] }
        defer { closedir(stream) }
        var found: [String] = []
        while found.count < maxCandidates, let entry = readdir(stream) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            guard let name = String(validating: bytes, as: UTF8.self), !name.unicodeScalars.contains(where: isControl) else { continue }
            guard name != ".", name != "..", name.hasPrefix(namePrefix) else { continue }
            // Hidden files only when asked for, as shells do.
            if name.hasPrefix("."), !namePrefix.hasPrefix(".") { continue }
            var info = stat()
            let isDirectory = stat(directory + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
            found.append(at + directory + name + (isDirectory ? "/" : ""))
        }
        return found.sorted()
    }

    /// C0, DEL and C1 (CSI is U+009B): what a terminal may act on.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value <= 0x9F)
    }
}
