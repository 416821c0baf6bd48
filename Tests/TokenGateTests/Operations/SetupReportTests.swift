import Testing

@testable import GateTestSupport
@testable import TokenGate

/// `tokengate check --format json`: the report's object, byte for byte, with
/// a file name or a server's answer escaped as every JSON of the gate is.
@Suite struct SetupReportTests {
    @Test func jsonIsPinnedAndEscapesInput() {
        let hostile = GateFixtures.hostileText
        let escaped = GateFixtures.hostileJSON
        var keys = SetupReport.Section(name: "keys", title: "Keys")
        keys.add(.problem, hostile, "refused", [(name: hostile, value: hostile), (name: "bits", value: "2048")])
        keys.add(.warning, "", "a sample key")
        let report = SetupReport(sections: [keys, SetupReport.Section(name: "redis", title: "Replay store")])
        let expected =
            #"{"ready":false,"problems":1,"warnings":1,"sections":[{"name":"keys","title":"Keys","findings":["#
            + #"{"severity":"problem","subject":""# + escaped + #"","message":"refused","facts":{""# + escaped + #"":""#
            + escaped + #"","bits":"2048"}},{"severity":"warning","subject":"","message":"a sample key"}]},"#
            + #"{"name":"redis","title":"Replay store","findings":[]}]}"# + "\n"
        #expect(report.json() == expected)
    }
}
