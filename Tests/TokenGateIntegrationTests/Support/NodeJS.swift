import Foundation
import IntegrationSupport

@testable import GateTestSupport

/// Debian's `nodejs`, for the debugger script's own tests (Tests/JavaScript). Missing, the
/// tests that need it are skipped with the reason, unless `TOKENINSPECT_INTEGRATION=require`
/// (then they run and fail), the project's convention for a peer that is not installed.
enum NodeJS {
    static let path = Browser.find(["node", "nodejs"])

    /// For `.enabled(if: NodeJS.available, "…")`.
    static var available: Bool { path != nil || Integration.required }

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Runs `node ARGUMENTS` in the repository; the exit status and what it wrote (stdout and stderr together).
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        guard let path else {
            throw Failure(description: "nodejs is required (TOKENINSPECT_INTEGRATION=require) but not installed: apt-get install nodejs")
        }
        let finished = try Subprocess.run(path, arguments, in: GateFixtures.repository)
        return (finished.status, finished.text)
    }
}
