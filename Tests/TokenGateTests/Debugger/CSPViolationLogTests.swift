import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The violations browsers reported, as the debugger answers them: each a
/// JSON string as received (a browser's body is not trusted to be JSON).
@Suite struct CSPViolationLogTests {
    @Test func jsonIsPinnedAndKeepsTheLastReports() {
        let log = CSPViolationLog()
        #expect(String(decoding: log.json(), as: UTF8.self) == #"{"total":0,"reports":[]}"# + "\n")
        log.record(#"{"csp-report":{}}"#)
        log.record(GateFixtures.hostileText)
        #expect(
            String(decoding: log.json(), as: UTF8.self)
                == #"{"total":2,"reports":["{\"csp-report\":{}}",""# + GateFixtures.hostileJSON + #""]}"# + "\n"
        )
        for index in 0..<CSPViolationLog.maximumReports { log.record("r\(index)") }
        let kept = String(decoding: log.json(), as: UTF8.self)
        #expect(kept.hasPrefix(#"{"total":34,"reports":["r0","#) && kept.hasSuffix(#""r31"]}"# + "\n"))
    }
}
