import Foundation
import Testing

/// The README's quick tour runs as printed: the block after the `tour` marker
/// goes to a real bash, with the built binary first on PATH, from the
/// repository root; every command must succeed.
@Suite struct ReadmeTourTests {
    @Test func quickTourRunsAsPrinted() throws {
        let readme = try String(contentsOf: CLI.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let marker = try #require(readme.range(of: "<!-- tour:"))
        let open = try #require(readme.range(of: "```sh\n", range: marker.upperBound..<readme.endIndex))
        let close = try #require(readme.range(of: "\n```", range: open.upperBound..<readme.endIndex))
        let tour = String(readme[open.upperBound..<close.lowerBound])
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
