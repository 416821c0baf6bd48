import EntitlementTokens
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The three answers of a pasted key's check (`pastedKey` in the debugger's
/// answer), byte for byte, with the verifier's reason and the key's name escaped.
@Suite struct PastedKeyCheckTests {
    let hostile = GateFixtures.hostileText
    let escaped = GateFixtures.hostileJSON

    @Test func notTried() {
        #expect(PastedKeyCheck.notTried(hostile) == #"{"tried":false,"reason":""# + escaped + #""}"#)
    }

    @Test func notSigned() {
        #expect(
            PastedKeyCheck.notSigned(hostile)
                == #"{"tried":true,"signedByPastedKey":false,"reason":"no pasted key verifies the signature: "# + escaped + #""}"#
        )
    }

    @Test func signedIsNeverValid() {
        #expect(
            PastedKeyCheck.signed(.validToken, reason: hostile, key: hostile)
                == #"{"tried":true,"signedByPastedKey":true,"status":"SIGNED_BY_PASTED_KEY","reason":""# + escaped + #"","key":""#
                + escaped + #""}"#
        )
        #expect(
            PastedKeyCheck.signed(.tokenExpired, reason: "expired", key: "k")
                == #"{"tried":true,"signedByPastedKey":true,"status":"TOKEN_EXPIRED","reason":"expired","key":"k"}"#
        )
    }
}
