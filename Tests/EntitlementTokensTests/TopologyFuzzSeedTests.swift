import Foundation
import Testing
import TokenTestSupport

/// FuzzTopology's seeds and fail cases through its oracle, in process (the
/// oracle traps on a disagreement, with both sides printed). Beside
/// FuzzFailCaseTests, whose list of targets belongs to the token pipeline.
@Suite("Fuzz: FuzzTopology seeds and fail cases")
struct TopologyFuzzSeedTests {
    @Test("every FuzzTopology seed and fail case passes the oracle")
    func replay() throws {
        let paths = FailCaseReplay.inputs(of: TopologyOracle.target)
        #expect(paths.count >= 10, "the seeds are there: \(paths.count)")
        for path in paths {
            let data = try #require(FileManager.default.contents(atPath: path), "cannot read \(path)")
            TopologyOracle.check([UInt8](data))
        }
    }
}
