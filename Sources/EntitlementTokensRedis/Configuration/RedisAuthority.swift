/// What every Redis URL form holds between its scheme and its query:
/// `[[user]:password@]hosts[/db]`. Read here once, for ``RedisEndpoint/init(url:)``
/// and for the Sentinel and Cluster forms, so the two cannot read a password
/// differently.
struct RedisAuthority {
    /// The credentials before the last `@`, percent-decoded.
    enum Credentials: Equatable {
        case none
        /// `user:password@`, `:password@` (no user).
        case userAndPassword(user: String?, password: String)
        /// `name@` alone: a password in the single-server form (as several
        /// clients read `redis://password@host`), a user or a password in the
        /// others, depending on `password-file=`.
        case lone(String)
    }

    /// The host list, credentials and path removed.
    var hosts: Substring
    var credentials: Credentials
    var database: Int

    init(_ text: Substring, invalid: (String) -> RedisClientError) throws(RedisClientError) {
        hosts = text
        database = 0
        // The path (database) starts at the first '/' after the authority.
        if let slash = text.firstIndex(of: "/") {
            hosts = text[..<slash]
            let path = text[text.index(after: slash)...]
            if !path.isEmpty {
                guard path.utf8.count <= 9, path.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                    let number = Int(path)
                else {
                    throw invalid("the database must be a number, as in redis://host:6379/2")
                }
                database = number
            }
        }
        credentials = .none
        // Credentials end at the last '@' (a password may hold '@' percent-encoded or not).
        guard let at = hosts.lastIndex(of: "@") else { return }
        let text = hosts[..<at]
        hosts = hosts[hosts.index(after: at)...]
        if let colon = text.firstIndex(of: ":") {
            guard let user = RedisEndpoint.percentDecoded(text[..<colon]),
                let password = RedisEndpoint.percentDecoded(text[text.index(after: colon)...])
            else {
                throw invalid("the user or password has a malformed percent escape")
            }
            credentials = .userAndPassword(user: user.isEmpty ? nil : user, password: password)
        } else {
            guard let lone = RedisEndpoint.percentDecoded(text) else {
                throw invalid("the password has a malformed percent escape")
            }
            credentials = .lone(lone)
        }
    }
}
