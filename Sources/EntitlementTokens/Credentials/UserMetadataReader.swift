/// The rules that turn a JSON document into ``UserMetadata``: strict about the
/// members the seeds name (a `zip` that is not a list of strings is refused, not
/// kept verbatim, because a support engineer relies on the typed reading), and
/// keeping everything else as written.
extension UserMetadata {
    /// Reads user metadata from the bytes of its JSON document, under the REST
    /// JSON reader's limits and rules (see ``DecoderConfiguration``). A UTF-8 byte
    /// order mark before the document is skipped; other pasted forms (Base64, a URL,
    /// a JSON string) are unwrapped by the credential detection before this.
    public init(json document: some Collection<UInt8>, configuration: DecoderConfiguration = .default) throws(TokenError) {
        try self.init(try JSONValue.readObject(Array(document), limits: JSONDocumentLimits(configuration: configuration)))
    }

    /// Reads user metadata in any pasted form (docs/DESIGN.md#user-metadata): what the credential
    /// detection unwraps (raw, quoted, in a URL or JSON body, white space, a BOM),
    /// and Base64 or Base64url of the whole document.
    public init(pasted input: [UInt8], configuration: DecoderConfiguration = .default) throws(TokenError) {
        switch CredentialDetection.detect(input, asking: .userMetadata, configuration: configuration) {
        case .userMetadata(let document, _):
            try self.init(json: document, configuration: configuration)
        case .refused(let error):
            let trimmed = input.filter { !$0.isASCIIWhitespace }
            guard trimmed.first != UInt8(ascii: "{"), trimmed.count <= configuration.maxRecordBytes,
                let decoded = try? Base64.decode(trimmed, whitespace: .lineBreaks).bytes,
                decoded.first(where: { !$0.isASCIIWhitespace }) == UInt8(ascii: "{")
            else { throw error }
            try self.init(json: decoded, configuration: configuration)
        default:
            try self.init(json: input, configuration: configuration)
        }
    }

    /// Reads user metadata from a JSON value already read.
    public init(_ document: JSONValue) throws(TokenError) {
        guard case .object(let members) = document else {
            throw Self.invalid("user metadata is a JSON object; this document is \(document.shapeForMessages)")
        }
        var updated: TokenTimestamp?
        var encryptedNames: [String]?
        var dataMembers: [JSONMember]?
        var others: [JSONMember] = []
        for member in members {
            switch member.name {
            case "updated": updated = try Self.updated(member.value)
            case "encrypted": encryptedNames = try Self.encryptedNames(member.value)
            case "data":
                guard case .object(let inner) = member.value else {
                    throw Self.invalid("'data' is \(member.value.shapeForMessages); it must be an object")
                }
                dataMembers = inner
            default: others.append(member)
            }
        }
        guard let dataMembers else {
            throw TokenError(.missingField, stage: .model, "user metadata has no 'data' object")
        }
        let encrypted = Set(encryptedNames ?? [])
        for name in encryptedNames ?? [] where !dataMembers.contains(where: { $0.name == name }) {
            throw Self.invalid("'encrypted' names '\(name)', which 'data' does not have")
        }
        var data: [Member] = []
        data.reserveCapacity(dataMembers.count)
        for member in dataMembers {
            data.append(Member(name: member.name, value: try Self.value(of: member, encrypted: encrypted.contains(member.name))))
        }
        self.init(updated: updated, encryptedNames: encryptedNames ?? [], data: data, otherMembers: others)
    }

    // MARK: - Members

    private static func updated(_ value: JSONValue) throws(TokenError) -> TokenTimestamp {
        guard case .number(let text) = value else {
            throw invalid("'updated' is \(value.shapeForMessages); it must be a number of epoch seconds")
        }
        guard let seconds = Int64(text), let milliseconds = multiplied(seconds, by: 1000),
            let timestamp = TokenTimestamp(millisecondsSince1970: milliseconds)
        else {
            throw invalid("'updated' is \(text); it must be whole epoch seconds within years 0001…9999")
        }
        return timestamp
    }

    private static func multiplied(_ value: Int64, by factor: Int64) -> Int64? {
        let (product, overflow) = value.multipliedReportingOverflow(by: factor)
        return overflow ? nil : product
    }

    private static func encryptedNames(_ value: JSONValue) throws(TokenError) -> [String] {
        guard case .array(let elements) = value else {
            throw invalid("'encrypted' is \(value.shapeForMessages); it must be a list of member names")
        }
        var names: [String] = []
        var seen: Set<String> = []
        for element in elements {
            guard case .string(let name) = element else {
                throw invalid("'encrypted' holds \(element.shapeForMessages); it must hold member names")
            }
            guard seen.insert(name).inserted else {
                throw TokenError(.duplicateField, stage: .model, "'encrypted' names '\(name)' twice")
            }
            names.append(name)
        }
        return names
    }

    private static func value(of member: JSONMember, encrypted: Bool) throws(TokenError) -> Value {
        let name = member.name
        if encrypted {
            guard case .string(let ciphertext) = member.value else {
                throw invalid("data.\(name) is encrypted, so its value must be a string of ciphertext; it is \(member.value.shapeForMessages)")
            }
            return .encrypted(ciphertext: ciphertext)
        }
        switch name {
        case "zip", "channelID":
            guard case .array(let elements) = member.value else {
                throw invalid("data.\(name) is \(member.value.shapeForMessages); it must be a list of strings")
            }
            var items: [String] = []
            items.reserveCapacity(elements.count)
            for element in elements {
                guard case .string(let item) = element else {
                    throw invalid("data.\(name) holds \(element.shapeForMessages); it must be a list of strings")
                }
                items.append(item)
            }
            return .list(items)
        case "householdID", "userID":
            guard case .string(let text) = member.value else {
                throw invalid("data.\(name) is \(member.value.shapeForMessages); it must be a string")
            }
            return .text(text)
        case "maxRating":
            guard case .object(let systems) = member.value else {
                throw invalid("data.maxRating is \(member.value.shapeForMessages); it must be an object of rating system → rating")
            }
            var ratings: [Rating] = []
            ratings.reserveCapacity(systems.count)
            for system in systems {
                guard case .string(let rating) = system.value else {
                    throw invalid("data.maxRating.\(system.name) is \(system.value.shapeForMessages); a rating is a string")
                }
                ratings.append(Rating(system: system.name, rating: rating))
            }
            return .ratings(ratings)
        default:
            return .verbatim(member.value)
        }
    }

    private static func invalid(_ message: String) -> TokenError {
        TokenError(.invalidFieldValue, stage: .model, message)
    }
}

extension JSONValue {
    /// What the value is, for messages: "a string", "an object".
    fileprivate var shapeForMessages: String {
        switch self {
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
