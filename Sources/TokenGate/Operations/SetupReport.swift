import EntitlementTokens

/// What `tokengate check` found, section by section (keys, session secrets,
/// replay store, CDN profiles, CAT keys): every finding with its severity, so
/// that one run names **every** problem, not the first one only
/// (docs/DESIGN.md#operators).
struct SetupReport: Sendable {
    enum Severity: String, Sendable {
        /// Loaded, answers, as it should be.
        case ok
        /// Said for completeness (a part that is off, a subdirectory not entered).
        case note
        /// Serves, but the operator should know (a sample key, a policy that cannot be read).
        case warning
        /// `serve` would refuse to start, or would serve unsafely or unready.
        case problem
    }

    struct Finding: Sendable {
        var severity: Severity
        /// What it is about: a file, an address, a profile (input: escaped when shown).
        var subject: String
        var message: String
        /// Named values (fingerprint, algorithm, bytes…), in order.
        var facts: [(name: String, value: String)] = []
    }

    struct Section: Sendable {
        /// A stable name, for `--format json`.
        var name: String
        var title: String
        var findings: [Finding] = []

        mutating func add(_ severity: Severity, _ subject: String, _ message: String, _ facts: [(name: String, value: String)] = []) {
            findings.append(Finding(severity: severity, subject: subject, message: message, facts: facts))
        }
    }

    var sections: [Section]

    func findings(_ severity: Severity) -> [Finding] { sections.flatMap(\.findings).filter { $0.severity == severity } }

    /// "1 problem, 2 warnings".
    var summary: String {
        func counted(_ count: Int, _ word: String) -> String { "\(count) \(word)\(count == 1 ? "" : "s")" }
        return counted(findings(.problem).count, "problem") + ", " + counted(findings(.warning).count, "warning")
    }

    /// For people: a block per section, then every problem again, numbered.
    /// Every line goes through the log's escaping (GateLogHandler.textEscaped),
    /// so a file name or a server's answer can draw nothing on the terminal.
    func text() -> String {
        var lines: [String] = []
        for section in sections {
            lines.append(section.title)
            if section.findings.isEmpty { lines.append("  -        none") }
            for finding in section.findings {
                lines.append("  " + Self.label(finding.severity) + Self.line(finding))
            }
            lines.append("")
        }
        let problems = findings(.problem)
        if problems.isEmpty {
            lines.append("ready to serve: \(summary)")
        } else {
            lines.append("not ready to serve: \(summary)")
            for (index, finding) in problems.enumerated() { lines.append("  \(index + 1). " + Self.line(finding)) }
        }
        return lines.map(GateLogHandler.textEscaped).joined(separator: "\n") + "\n"
    }

    /// For programs: `{"ready":…,"problems":N,"warnings":N,"sections":[{"name":…,"findings":[…]}]}`.
    func json() -> String {
        var json = JSONWriter(capacity: 1024, controlEscapes: .unicode)
        json.beginObject()
        json.member("ready")
        json.bool(findings(.problem).isEmpty)
        json.member("problems")
        json.int(findings(.problem).count)
        json.member("warnings")
        json.int(findings(.warning).count)
        json.member("sections")
        json.beginArray()
        for section in sections {
            json.element()
            json.beginObject()
            json.member("name")
            json.string(section.name)
            json.member("title")
            json.string(section.title)
            json.member("findings")
            json.beginArray()
            for finding in section.findings {
                json.element()
                json.beginObject()
                json.member("severity")
                json.string(finding.severity.rawValue)
                json.member("subject")
                json.string(finding.subject)
                json.member("message")
                json.string(finding.message)
                if !finding.facts.isEmpty {
                    json.member("facts")
                    json.beginObject()
                    for fact in finding.facts {
                        json.key(fact.name)
                        json.string(fact.value)
                    }
                    json.endObject()
                }
                json.endObject()
            }
            json.endArray()
            json.endObject()
        }
        json.endArray()
        json.endObject()
        json.raw("\n")
        return json.text
    }

    private static func label(_ severity: Severity) -> String {
        switch severity {
        case .ok: "ok       "
        case .note: "note     "
        case .warning: "WARNING  "
        case .problem: "PROBLEM  "
        }
    }

    private static func line(_ finding: Finding) -> String {
        let facts = finding.facts.isEmpty ? "" : " (" + finding.facts.map { "\($0.name) \($0.value)" }.joined(separator: ", ") + ")"
        return (finding.subject.isEmpty ? "" : finding.subject + ": ") + finding.message + facts
    }
}
