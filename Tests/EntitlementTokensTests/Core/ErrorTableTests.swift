import EntitlementTokens
import Foundation
import Testing
import TokenTestSupport

/// docs/FORMAT.md's table of error codes by stage is a contract: the fuzz
/// oracles check every error against it. These tests keep the three in step —
/// the table, the oracle's copy, and the codes the library has — so a code
/// added to one place and not the others fails here, not in a fuzz run.
@Suite("Error table")
struct ErrorTableTests {
    /// The table under "Errors" in docs/FORMAT.md: stage → the codes in backquotes on its row.
    static func documentedTable() throws -> [String: Set<String>] {
        var path = #filePath
        for _ in 0..<4 { path = String(path[..<path.lastIndex(of: "/")!]) }
        let text = try String(contentsOfFile: path + "/docs/FORMAT.md", encoding: .utf8)
        var table: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3, let stage = TokenError.Stage(rawValue: cells[1]) else { continue }
            let codes = cells[2].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map {
                String($0.element)
            }
            .filter { $0.first?.isLetter == true }  // not `--param`, named in a remark
            table[stage.rawValue, default: []].formUnion(codes)
        }
        return table
    }

    @Test("the fuzz oracle's codes by stage are docs/FORMAT.md's table")
    func oracleMatchesTheDocs() throws {
        let documented = try Self.documentedTable()
        #expect(Set(documented.keys) == ["transport", "framing", "parsing", "model"])
        for (stage, codes) in DecodeOracle.codesByStage {
            let oracle = Set(codes.map(\.rawValue))
            let docs = documented[stage.rawValue] ?? []
            #expect(
                oracle == docs,
                "stage \(stage.rawValue): only in the oracle \(oracle.subtracting(docs).sorted()), only in FORMAT.md \(docs.subtracting(oracle).sorted())"
            )
        }
    }

    @Test("every code the library has is in the table, and the table names no other")
    func everyCodeIsDocumented() throws {
        let documented = try Self.documentedTable().values.reduce(into: Set<String>()) { $0.formUnion($1) }
        let library = Set(TokenError.Code.allCases.map(\.rawValue))
        #expect(library.subtracting(documented).isEmpty, "not in docs/FORMAT.md: \(library.subtracting(documented).sorted())")
        #expect(documented.subtracting(library).isEmpty, "in docs/FORMAT.md, not in the library: \(documented.subtracting(library).sorted())")
    }

    @Test("the verify oracle's device fingerprints are coreutils' digests of its device id")
    func deviceFingerprintsAreKnownAnswers() throws {
        var answers: Set<String> = []
        for tool in ["sha256sum", "sha1sum", "md5sum"] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [tool]
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            input.fileHandleForWriting.write(Data(VerifyOracle.deviceID.utf8))
            try input.fileHandleForWriting.close()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            answers.insert(String(text.prefix { $0 != " " }))
        }
        #expect(answers == VerifyOracle.deviceFingerprints)
    }
}
