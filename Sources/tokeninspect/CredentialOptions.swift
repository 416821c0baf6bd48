import ArgumentParser
import CDNTokens
import EntitlementTokens

/// `--kind`, shared by `inspect` and `verify`: what the INPUTs are, when
/// detection should not decide (docs/DESIGN.md#telling-the-kinds-apart). Bare Base64 is read as a signed
/// requestor ID only under `--kind signed-requestor-id`; a CDN kind reads every
/// INPUT as that CDN's token (docs/DESIGN.md#reading-cdn-tokens-back).
struct CredentialOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Read every INPUT as this kind: software-statement, signed-requestor-id, user-metadata, or a CDN token: akamai, cloudfront, cat, nginx-secure-link. (default: detected from the form)",
        valueName: "KIND"))
    var kind: InputKindArgument?

    @Option(help: ArgumentHelp(
        "The digest of a signed requestor ID's RSA PKCS#1 v1.5 signature: sha256, or sha1 for old registrations.",
        valueName: "DIGEST"))
    var digest: RequestorIDDigestArgument = .sha256
}

enum RequestorIDDigestArgument: String, ExpressibleByArgument, CaseIterable {
    case sha256, sha1

    var value: RequestorIDDigest { RequestorIDDigest(rawValue: rawValue)! }
}

enum InputKindArgument: String, ExpressibleByArgument, CaseIterable {
    case softwareStatement = "software-statement"
    case signedRequestorID = "signed-requestor-id"
    case userMetadata = "user-metadata"
    case akamai
    case cloudfront
    case cat
    case nginxSecureLink = "nginx-secure-link"

    /// The credential kind, or nil for a CDN kind.
    var credentialKind: CredentialKind? { CredentialKind(rawValue: rawValue) }

    /// The CDN token kind, or nil for a credential kind.
    var cdnKind: CDNTokenKind? { CDNTokenKind(rawValue: rawValue) }
}
