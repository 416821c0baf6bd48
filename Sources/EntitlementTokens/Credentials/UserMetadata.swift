/// User metadata as an MVPD returns it through the SDK's `getMetadata:` →
/// `setMetadataStatus:encrypted:forKey:andArguments:` (docs/DESIGN.md#user-metadata):
///
/// ```json
/// {"updated": 1334243471, "encrypted": ["householdID"],
///  "data": {"zip": ["12345"], "householdID": "<ciphertext>", "maxRating": {"MPAA": "PG-13"},
///           "userID": "u1", "channelID": ["c1", "c2"]}}
/// ```
///
/// The members the seeds name are typed; anything else the MVPD adds is kept
/// verbatim and in order. A member named in `encrypted` holds ciphertext (a
/// JWE compact serialization or Base64 of an RSA ciphertext), marked as such
/// and never typed, since its plain value is unknown until decrypted.
/// Immutable: made only by ``init(json:configuration:)`` or ``init(_:)``, which
/// check every rule, or by minting.
public struct UserMetadata: Sendable, Hashable {
    /// When the MVPD last updated the metadata (`updated`, whole epoch seconds).
    public let updated: TokenTimestamp?
    /// The `encrypted` list: names of `data` members whose values are ciphertext, in order.
    public let encryptedNames: [String]
    /// The members of `data`, in document order.
    public let data: [Member]
    /// Top-level members other than `updated`, `encrypted` and `data`, verbatim and in order.
    public let otherMembers: [JSONMember]

    /// One member of `data`.
    public struct Member: Sendable, Hashable {
        public let name: String
        public let value: Value

        /// True when `encrypted` names this member: its value is ciphertext.
        public var isEncrypted: Bool {
            if case .encrypted = value { return true }
            return false
        }

        init(name: String, value: Value) {
            self.name = name
            self.value = value
        }
    }

    /// A `data` member's value, typed where the seeds name it.
    public enum Value: Sendable, Hashable {
        /// A value named in `encrypted`: the ciphertext as written.
        case encrypted(ciphertext: String)
        /// `zip` and `channelID`: a list of strings.
        case list([String])
        /// `householdID` and `userID`: a string.
        case text(String)
        /// `maxRating`: rating system → rating, in document order.
        case ratings([Rating])
        /// Any other member (or a known one the MVPD shaped otherwise is refused, not kept here).
        case verbatim(JSONValue)
    }

    /// One entry of `maxRating`: `"MPAA": "PG-13"`.
    public struct Rating: Sendable, Hashable {
        public let system: String
        public let rating: String

        public init(system: String, rating: String) {
            self.system = system
            self.rating = rating
        }
    }

    /// The `data` member named `name`.
    public subscript(name: String) -> Member? {
        data.first { $0.name == name }
    }

    /// `zip` when it is present and not encrypted.
    public var zip: [String]? { list("zip") }
    /// `channelID` when it is present and not encrypted.
    public var channelIDs: [String]? { list("channelID") }
    /// `householdID` when it is present and not encrypted.
    public var householdID: String? { text("householdID") }
    /// `userID` when it is present and not encrypted.
    public var userID: String? { text("userID") }
    /// `maxRating` when it is present and not encrypted.
    public var maxRating: [Rating]? {
        guard case .ratings(let ratings) = self["maxRating"]?.value else { return nil }
        return ratings
    }

    /// The members whose values are ciphertext, in document order.
    public var encryptedMembers: [Member] { data.filter(\.isEncrypted) }

    private func list(_ name: String) -> [String]? {
        guard case .list(let items) = self[name]?.value else { return nil }
        return items
    }

    private func text(_ name: String) -> String? {
        guard case .text(let text) = self[name]?.value else { return nil }
        return text
    }

    /// A value the reader or a minter has checked.
    init(updated: TokenTimestamp?, encryptedNames: [String], data: [Member], otherMembers: [JSONMember]) {
        self.updated = updated
        self.encryptedNames = encryptedNames
        self.data = data
        self.otherMembers = otherMembers
    }
}

extension UserMetadata {
    /// The metadata as a JSON value: `updated`, `encrypted`, `data`, then the other
    /// members in their order. Reading its ``JSONValue/encoded`` gives this value again.
    public var json: JSONValue {
        var members: [JSONMember] = []
        if let updated {
            let (seconds, _) = TokenTimestamp.floorDivide(updated.millisecondsSince1970, 1000)
            members.append(JSONMember(name: "updated", value: .number(String(seconds))))
        }
        if !encryptedNames.isEmpty || data.contains(where: \.isEncrypted) {
            members.append(JSONMember(name: "encrypted", value: .array(encryptedNames.map { .string($0) })))
        }
        members.append(JSONMember(name: "data", value: .object(data.map { JSONMember(name: $0.name, value: $0.value.json) })))
        members += otherMembers
        return .object(members)
    }

    /// Compact JSON of ``json``.
    public var jsonText: String { String(decoding: json.encoded, as: UTF8.self) }
}

extension UserMetadata.Value {
    /// The value as it is written in `data`.
    public var json: JSONValue {
        switch self {
        case .encrypted(let ciphertext): .string(ciphertext)
        case .list(let items): .array(items.map { .string($0) })
        case .text(let text): .string(text)
        case .ratings(let ratings): .object(ratings.map { JSONMember(name: $0.system, value: .string($0.rating)) })
        case .verbatim(let value): value
        }
    }
}
