import EntitlementTokens

/// The profiles a gate (or `tokeninspect`) was given, each file read whole:
/// names unique, keys loaded, every resource tried once. A set is replaced
/// whole on reload, never edited.
public struct CDNProfileSet: Sendable {
    public let profiles: [CDNProfile]

    public init(_ profiles: [CDNProfile]) {
        self.profiles = profiles
    }

    public static let empty = CDNProfileSet([])

    public var names: [String] { profiles.map(\.name) }

    public func profile(named name: String) -> CDNProfile? {
        profiles.first { $0.name == name }
    }

    /// Reads each profile file and the keys it names. A relative key path is
    /// read under `credentialsDirectory` (systemd's `$CREDENTIALS_DIRECTORY`)
    /// when one is set, else from the working directory; an error names the
    /// path it tried and where it looked.
    public static func load(paths: [String], defaults: CDNProfileDefaults, credentialsDirectory: String?) throws(CDNProfileError) -> CDNProfileSet {
        var profiles: [CDNProfile] = []
        for path in paths {
            let bytes: [UInt8]
            do { bytes = try KeyFiles.read(path) } catch { throw CDNProfileError("--cdn-profile \(error.message)") }
            guard let text = String(validating: bytes, as: UTF8.self) else { throw CDNProfileError("\(path): not UTF-8 text") }
            let settings = try CDNProfileSettings(text: text, source: path)
            if let earlier = profiles.first(where: { $0.name == settings.name }) {
                throw CDNProfileError("\(path): the profile name \(settings.name) is taken by \(earlier.settings.source)")
            }
            profiles.append(
                try CDNProfile(settings: settings, defaults: defaults) { (keyPath: String) throws(CDNProfileError) -> [UInt8] in
                    let resolved = SecretFileBytes.path(keyPath, credentialsDirectory: credentialsDirectory)
                    do throws(KeyError) { return try KeyFiles.read(resolved) } catch {
                        let looked =
                            keyPath.hasPrefix("/")
                            ? ""
                            : credentialsDirectory.map { _ in " (a relative path is read under $CREDENTIALS_DIRECTORY)" }
                                ?? " (a relative path is read from the working directory; under systemd, from $CREDENTIALS_DIRECTORY)"
                        throw CDNProfileError("\(path): key \(error.message)\(looked)")
                    }
                }
            )
        }
        return CDNProfileSet(profiles)
    }
}
