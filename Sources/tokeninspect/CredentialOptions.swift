import ArgumentParser
import EntitlementTokens

/// `--kind`, shared by `inspect` and `verify`: what the INPUTs are, when
/// detection should not decide (docs/DESIGN.md#telling-the-kinds-apart). Bare Base64 is read as a signed
/// requestor ID only under `--kind signed-requestor-id`.
struct CredentialOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Read every INPUT as this credential: software-statement, signed-requestor-id or user-metadata. (default: detected; tokens and credentials are told apart by their form)",
        valueName: "KIND"))
    var kind: CredentialKindArgument?

    @Option(help: ArgumentHelp(
        "The digest of a signed requestor ID's RSA PKCS#1 v1.5 signature: sha256, or sha1 for old registrations.",
        valueName: "DIGEST"))
    var digest: RequestorIDDigestArgument = .sha256
}

enum RequestorIDDigestArgument: String, ExpressibleByArgument, CaseIterable {
    case sha256, sha1

    var value: RequestorIDDigest { RequestorIDDigest(rawValue: rawValue)! }
}

enum CredentialKindArgument: String, ExpressibleByArgument, CaseIterable {
    case softwareStatement = "software-statement"
    case signedRequestorID = "signed-requestor-id"
    case userMetadata = "user-metadata"

    var value: CredentialKind { CredentialKind(rawValue: rawValue)! }
}
