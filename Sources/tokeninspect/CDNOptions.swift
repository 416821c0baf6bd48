import CDNTokens

/// What reading a CDN token back needs beside `--key`, `--now` and
/// `--leeway`, shared by `inspect` and `verify` (docs/DESIGN.md#reading-cdn-tokens-back):
/// a profile (or the key's id and a secure-link expression) and the request
/// the edge saw. Given for any other INPUT, they are a usage error: an option
/// that would be silently ignored is worse than none.
struct CDNOptions {
    static let options: [OptionSpec] = [
        .option(
            "profile",
            "FILE",
            help:
                "CDN tokens: a CDN profile (as tokengate --cdn-profile reads it), which gives the kind, the keys, the token name and the secure-link expression.",
            completion: .file
        ),
        .option("url", "URL", help: "CDN tokens: the URL the edge was asked for. (default: the pasted URL)"),
        .option("client-ip", "IP", help: "CDN tokens: the viewer's IP address, for a token bound to one."),
        .option("key-id", "ID", help: "CDN tokens: the Key-Pair-Id (cloudfront) or kid (cat) the --key answers to. (default: the token's)"),
        .option(
            "secure-link-md5",
            "EXPRESSION",
            help: "CDN tokens: the edge's secure_link_md5 expression, the secret written $secret, for an nginx-secure-link --key (the secret file)."
        ),
        .option(
            "cat-audience",
            "AUD",
            help: "CDN tokens: the audience a CAT's aud must name, for a cat --key (a profile's is its audience setting)."
        ),
    ]

    let profile: String?
    let url: String?
    let clientIP: String?
    let keyID: String?
    let secureLinkMd5: String?
    let catAudience: String?

    init(_ parsed: ParsedArguments) throws {
        profile = parsed.string("profile")
        url = parsed.string("url")
        requestURL = url.map { text in Result { () throws(CDNRefusal) in try CDNURL(parsing: text) } }
        clientIP = parsed.string("client-ip")
        keyID = parsed.string("key-id")
        secureLinkMd5 = parsed.string("secure-link-md5")
        catAudience = parsed.string("cat-audience")
        try validate()
    }

    func validate() throws {
        if case .failure(let refusal)? = requestURL, refusal.status != .invalidURL {
            throw ValidationError("--url: \(refusal.reason)")
        }
        if let clientIP, CDNIPAddress(clientIP) == nil {
            throw ValidationError("--client-ip takes an IPv4 or IPv6 address")
        }
        if profile != nil, keyID != nil || secureLinkMd5 != nil || catAudience != nil {
            throw ValidationError(
                "--profile holds the keys, their ids, the secure-link expression and a CAT's audience; "
                    + "give --profile, or --key with --key-id, --secure-link-md5 and --cat-audience"
            )
        }
        if catAudience?.isEmpty == true { throw ValidationError("--cat-audience is empty") }
    }

    /// The options given, by name, for the error that says they are for CDN tokens only.
    var given: [String] {
        [
            (profile, "--profile"), (url, "--url"), (clientIP, "--client-ip"), (keyID, "--key-id"), (secureLinkMd5, "--secure-link-md5"),
            (catAudience, "--cat-audience"),
        ]
        .compactMap { $0.0 == nil ? nil : $0.1 }
    }

    /// `--url`, read: a URL, or the refusal of a path the one reading refuses
    /// (docs/DESIGN.md#one-reading-of-a-path), which every token's report then carries
    /// as `INVALID_URL`; validate() has refused every other failure as a usage error.
    let requestURL: Result<CDNURL, CDNRefusal>?
}
