import Foundation

@testable import EntitlementTokens

/// Signed tokens for verification tests, from the test-only fixture keys.
enum Minting {
    /// 2016-03-17T22:01:31Z, the issue time of the vendor's documented token.
    static let issued = TokenTimestamp(millisecondsSince1970: 1_458_252_091_000)!

    static func key(_ name: String = "test-rsa2048.pem") -> SigningKey {
        try! SignatureFixtures.signingKey(name)
    }

    static func ring(_ names: String..., options: KeyLoadingOptions = .init()) -> KeyRing {
        try! KeyRing.load(paths: names.map(SignatureFixtures.path), options: options)
    }

    static func request(_ kind: TokenKind = .media, resource: String = "TNT") -> MintRequest {
        var request = MintRequest(kind: kind, requestorID: "TNT", resourceID: resource, issueTime: issued)
        request.mvpdID = "Comcast_SSO"
        request.sessionGUID = "ff22f3a4e2b2b5fcd1a0e1f8c8ac10b6"
        if kind != .media { request.fingerprint = DeviceFingerprint.hash("device-1", hexLength: 64) }
        return request
    }

    static func token(_ request: MintRequest = request(), key: SigningKey = key()) -> String {
        try! TokenMinter.mint(request, key: key)
    }

    /// What a test configures in one place: the start-up policy and the
    /// per-request expectations, by the names of both.
    struct Configuration {
        var requestorID: String?
        var allowedMVPDs: [String]?
        var leewayMilliseconds: Int64 = 30_000
        var replayStore: (any ReplayStore)?
        var resourceID: String?
        var device: DeviceExpectation?
    }

    /// A verifier whose clock reads `now`, with the expectations of every request.
    struct ExpectingVerifier: Sendable {
        let verifier: TokenVerifier
        let expectations: RequestExpectations

        func verify(_ text: String) -> Verdict { verifier.verify(text, expecting: expectations) }
        func verify(_ bytes: [UInt8]) -> Verdict { verifier.verify(bytes, expecting: expectations) }
        func verify(_ record: TokenRecord) -> Verdict { verifier.verify(record, expecting: expectations) }
        func verify(_ token: DecodedToken) -> Verdict { verifier.verify(token, expecting: expectations) }
    }

    static func verifier(
        _ ring: KeyRing = ring("test-rsa2048.pub.pem"),
        now: TokenTimestamp = issued,
        configure: (inout Configuration) -> Void = { _ in }
    ) -> ExpectingVerifier {
        var configuration = Configuration()
        configure(&configuration)
        let policy = VerificationPolicy(
            requestorID: configuration.requestorID,
            allowedMVPDs: configuration.allowedMVPDs,
            leewayMilliseconds: configuration.leewayMilliseconds,
            replayStore: configuration.replayStore,
            clock: { now }
        )
        return ExpectingVerifier(
            verifier: TokenVerifier(signature: .trustedKeys(ring), policy: policy),
            expectations: RequestExpectations(resourceID: configuration.resourceID, device: configuration.device)
        )
    }

    static func at(_ milliseconds: Int64, from base: TokenTimestamp = issued) -> TokenTimestamp {
        base.adding(milliseconds: milliseconds)!
    }
}
