import EntitlementTokens

/// The report as one JSON object for scripts (docs/CLI.md#a-capture-har):
/// `entries`, `credentials`, `chain` and `findings`, members in a fixed order,
/// written by the library's JSON writer (every string escaped as RFC 8259 says).
package enum HARReportJSON {
    package static func encoded(_ report: HARReport) -> [UInt8] {
        var entries: [JSONValue] = []
        var credentials: [JSONValue] = []
        for entry in report.timeline {
            var members = [
                JSONMember(name: "number", value: .number(String(entry.number))),
                JSONMember(name: "time", value: entry.started.map { .string($0.iso8601) } ?? .null),
                JSONMember(name: "method", value: .string(entry.method)),
                JSONMember(name: "url", value: .string(entry.url)),
                JSONMember(name: "status", value: .number(String(entry.status))),
            ]
            if let error = entry.error { members.append(JSONMember(name: "error", value: .string(error))) }
            entries.append(.object(members))
            for credential in entry.credentials {
                credentials.append(
                    .object([
                        JSONMember(name: "kind", value: .string(credential.kind.rawValue)),
                        JSONMember(name: "where", value: .string(credential.place.rawValue)),
                        JSONMember(name: "name", value: credential.name.map { .string($0) } ?? .null),
                        JSONMember(name: "entry", value: .number(String(credential.entry))),
                        JSONMember(name: "fingerprint", value: .string(credential.fingerprint)),
                        JSONMember(name: "verdict", value: .string(credential.verdict.status)),
                        JSONMember(name: "reason", value: .string(credential.verdict.reason)),
                        JSONMember(name: "expiry", value: credential.expires.map { .string($0.iso8601) } ?? .null),
                    ])
                )
            }
        }
        let chain: [JSONValue] = report.chain.map { link in
            .object([
                JSONMember(name: "mediaToken", value: link.mediaToken.map { .string($0) } ?? .null),
                JSONMember(name: "issuedBy", value: .number(String(link.issuedBy))),
                JSONMember(name: "kind", value: .string(link.kind.rawValue)),
                JSONMember(name: "fingerprint", value: .string(link.fingerprint)),
                JSONMember(name: "covered", value: .array(link.covered.map { .number(String($0)) })),
                JSONMember(name: "refused", value: .array(link.refused.map { .number(String($0)) })),
                JSONMember(name: "until", value: link.until.map { .string($0.iso8601) } ?? .null),
            ])
        }
        let findings: [JSONValue] = report.findings.map { finding in
            .object([
                JSONMember(name: "kind", value: .string(finding.kind)),
                JSONMember(name: "entries", value: .array(finding.entries.map { .number(String($0)) })),
                JSONMember(name: "message", value: .string(finding.message)),
                JSONMember(name: "failure", value: .bool(finding.isFailure)),
            ])
        }
        let document = JSONValue.object([
            JSONMember(name: "entries", value: .array(entries)),
            JSONMember(name: "credentials", value: .array(credentials)),
            JSONMember(name: "chain", value: .array(chain)),
            JSONMember(name: "findings", value: .array(findings)),
        ])
        return document.encoded + [0x0A]
    }
}
