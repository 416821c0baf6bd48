/// Every exit status of one executable and what it means, written once: the
/// executable's `--help` prints it as the last paragraph of its discussion,
/// which `--experimental-dump-help` carries too, and `scripts/man-pages`
/// turns that paragraph into the man page's EXIT STATUS section
/// (docs/DESIGN.md#exit-codes).
///
/// The paragraph is `Exit status:` and one indented line per code (a long
/// meaning continues on lines indented further): the help keeps indented
/// lines as written, so the table reads the same at any terminal width.
/// `package`, not `public`: the package's two executables use it.
package struct ExitStatusTable: Sendable {
    package let rows: [(code: Int32, meaning: String)]

    package init(_ rows: [(code: Int32, meaning: String)]) {
        self.rows = rows
    }

    /// The paragraph's first line, which `scripts/man-pages` looks for.
    package static let heading = "Exit status:"

    /// The paragraph for a command's discussion, wrapped to 80 columns.
    package var helpText: String {
        let codeWidth = rows.map { String($0.code).count }.max() ?? 1
        var lines = [Self.heading]
        for row in rows {
            let code = String(row.code)
            var line = "  " + code + String(repeating: " ", count: codeWidth - code.count + 2)
            let indent = String(repeating: " ", count: line.count + 2)
            var first = true
            for word in row.meaning.split(separator: " ") {
                if !first, line.count + 1 + word.count > 78 {
                    lines.append(line)
                    line = indent + word
                } else {
                    line += (first ? "" : " ") + word
                }
                first = false
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
