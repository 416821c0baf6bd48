import CDNTokens
import EntitlementTokens

/// `--kind`, shared by `inspect` and `verify`: what the INPUTs are, when
/// detection should not decide (docs/DESIGN.md#telling-the-kinds-apart). Bare Base64 is read as a signed
/// requestor ID only under `--kind signed-requestor-id`; a CDN kind reads every
/// INPUT as that CDN's token (docs/DESIGN.md#reading-cdn-tokens-back).
struct CredentialOptions {
    static let options: [OptionSpec] = [
        .choice(
            "kind",
            "KIND",
            InputKindArgument.self,
            help:
                "Read every INPUT as this kind: software-statement, signed-requestor-id, user-metadata, or a CDN token: akamai, cloudfront, cat, nginx-secure-link. (default: detected from the form)"
        ),
        .choice(
            "digest",
            "DIGEST",
            RequestorIDDigestArgument.self,
            help: "The digest of a signed requestor ID's RSA PKCS#1 v1.5 signature: sha256, or sha1 for old registrations.",
            default: .sha256
        ),
    ]

    let kind: InputKindArgument?
    let digest: RequestorIDDigestArgument

    init(_ parsed: ParsedArguments) {
        kind = parsed.choice("kind", as: InputKindArgument.self)
        digest = parsed.choice("digest")
    }
}

enum RequestorIDDigestArgument: String, CaseIterable {
    case sha256, sha1

    var value: RequestorIDDigest { RequestorIDDigest(rawValue: rawValue)! }
}

enum InputKindArgument: String, CaseIterable {
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
