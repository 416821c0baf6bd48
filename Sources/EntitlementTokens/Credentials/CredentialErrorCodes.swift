extension TokenError.Code {
    /// Text that should be a JWS compact serialization (a software statement)
    /// is not three canonical unpadded Base64url parts.
    public static var notJWS: Self { Self("notJWS") }
    /// A `{…}` document whose members belong to two credential kinds (a REST
    /// token response, user metadata, a JWKS): never "pick one" (docs/DESIGN.md#telling-the-kinds-apart).
    public static var ambiguousCredential: Self { Self("ambiguousCredential") }
    /// The input is a credential of a kind the caller did not ask for, or of none.
    public static var unrecognizedCredential: Self { Self("unrecognizedCredential") }

    /// The codes of the credential readers (docs/DESIGN.md#the-sdks-other-credentials).
    public static var credentialCases: [Self] { [.notJWS, .ambiguousCredential, .unrecognizedCredential] }
}
