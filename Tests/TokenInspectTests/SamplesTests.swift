import Foundation
import Testing

/// Every row of Samples/README.md's tables holds, through the real binary.
@Suite struct SamplesTests {
    struct Row: CustomStringConvertible {
        var file: String
        var input: Int
        var status: String
        var description: String { "\(file) #\(input) → \(status)" }
    }

    static func rows() throws -> [Row] {
        let readme = try String(contentsOf: CLI.packageRoot.appendingPathComponent("Samples/README.md"), encoding: .utf8)
        return readme.split(separator: "\n").compactMap { line -> Row? in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 4, cells[0].hasPrefix("`tokens/"), let input = Int(cells[1]) else { return nil }
            return Row(file: "Samples/" + cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")), input: input, status: cells[3])
        }
    }

    @Test func theTablesCoverEveryStatusKindAndForm() throws {
        let rows = try Self.rows()
        #expect(rows.count == 32)
        let statuses = Set(rows.map(\.status))
        for status in [
            "VALID_TOKEN", "INVALID_TOKEN_FORMAT", "INVALID_SIGNATURE", "TOKEN_EXPIRED", "TOKEN_NOT_YET_VALID",
            "INVALID_REQUESTOR_ID", "INVALID_RESOURCE_ID", "UNTRUSTED_MVPD", "DEVICE_MISMATCH", "TOKEN_REPLAYED",
        ] {
            #expect(statuses.contains(status), "no sample for \(status)")
        }
    }

    @Test func everySampleGetsTheVerdictItsRowClaims() throws {
        let rows = try Self.rows()
        for (file, fileRows) in Dictionary(grouping: rows, by: \.file) {
            let result = try CLI.run(["verify", "--format", "jsonl"] + CLI.sampleFlags + ["@" + file])
            let objects = try CLI.jsonLines(result.stdout)
            #expect(objects.count == fileRows.count, "\(file) has \(objects.count) tokens, the README lists \(fileRows.count)")
            for row in fileRows {
                let object = objects.first { $0["input"] as? Int == row.input }
                #expect(object?["status"] as? String == row.status, "\(row): \(object?["reason"] as? String ?? "missing")")
            }
        }
    }

    @Test func samplesCoverEveryKindAndTransportForm() throws {
        let result = try CLI.run([
            "inspect", "--format", "jsonl", "@Samples/tokens/valid.txt", "@Samples/tokens/rest-v1.json", "@Samples/tokens/rest-v2.json",
        ])
        let objects = try CLI.jsonLines(result.stdout)
        #expect(Set(objects.compactMap { $0["kind"] as? String }) == ["media", "authentication", "authorization"])
        let transports = Set(objects.compactMap { $0["transport"] as? String })
        for form in ["raw", "base64", "base64url", "percent+base64", "percent+raw", "rest-v1+base64", "rest-v2+base64"] {
            #expect(transports.contains(form), "no sample in \(form)")
        }
        let forms = Set(objects.compactMap { ($0["signature"] as? [String: Any])?["form"] as? String })
        #expect(forms == ["legacy", "closed"])
    }

    /// The software statement sample (docs/DESIGN.md#software-statements) verifies with the trusted PEM keys
    /// and with its JWKS, and expires when its README says.
    @Test(arguments: ["Samples/keys/trusted", "Samples/credentials/sample-1.jwks"])
    func theSoftwareStatementSampleVerifies(key: String) throws {
        let statement = "@Samples/credentials/software-statement.jwt"
        let valid = try CLI.run(["verify", "--format", "jsonl", "--key", key, "--now", "2026-01-15T12:03:00Z", statement])
        let object = try #require(try CLI.jsonLines(valid.stdout).first)
        #expect(object["status"] as? String == "VALID_TOKEN", "\(object["reason"] ?? valid.stderr)")
        #expect(object["kind"] as? String == "software-statement")
        #expect(object["keyID"] as? String == "sample-1")
        #expect(valid.status == 0)
        let expired = try CLI.run(["verify", "--format", "jsonl", "--key", key, "--now", "2027-02-01T00:00:00Z", statement])
        #expect(try CLI.jsonLines(expired.stdout).first?["status"] as? String == "TOKEN_EXPIRED")
        #expect(expired.status == 1)
    }
}
