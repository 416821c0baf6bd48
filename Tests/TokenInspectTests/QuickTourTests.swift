import Foundation
import Testing

/// The CLI guide's quick tour (docs/CLI.md, "Quick tour") runs as printed:
/// the block after the `tour` marker under that heading goes to a real bash,
/// with the built binary first on PATH, from the repository root; every
/// command must succeed.
@Suite struct QuickTourTests {
    @Test func quickTourRunsAsPrinted() throws {
        let guide = try String(contentsOf: CLI.packageRoot.appendingPathComponent("docs/CLI.md"), encoding: .utf8)
        let heading = try #require(guide.range(of: "\n## Quick tour\n"))
        let marker = try #require(guide.range(of: "<!-- tour:", range: heading.upperBound..<guide.endIndex))
        let open = try #require(guide.range(of: "```sh\n", range: marker.upperBound..<guide.endIndex))
        let close = try #require(guide.range(of: "\n```", range: open.upperBound..<guide.endIndex))
        let tour = String(guide[open.upperBound..<close.lowerBound])
        #expect(tour.contains("tokeninspect verify"))
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("tour-\(UUID().uuidString).sh")
        defer { try? FileManager.default.removeItem(at: script) }
        // -e: the first command that fails stops the tour; pipefail: inside a pipe too.
        try Data(("set -euo pipefail\n" + tour + "\n").utf8).write(to: script)
        let bin = CLI.binary.deletingLastPathComponent().path
        let run = try CLI.run([], environment: ["PATH": "\(bin):/usr/bin:/bin"], shell: ["/bin/bash", script.path])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("VALID_TOKEN"))
        #expect(run.stdout.contains("took the token from the 'token' parameter of the URL"))
        #expect(run.stdout.contains("joined Base64 wrapped over"))
        #expect(run.stdout.contains("removed the double quotes and trailing comma"))
    }
}
