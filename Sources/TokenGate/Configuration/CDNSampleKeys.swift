import CDNTokens
import EntitlementTokens
import FoundationEssentials

/// The key files of the CDN profiles and of `--cat-key` that are the
/// repository's sample keys (docs/DESIGN.md#sample-keys): their secrets are
/// published, so anyone can make the CDN tokens the gate hands out, or the
/// CATs it accepts. Named as "test-only-akamai (FILE)" for the warning the
/// gate logs at start and after every reload and `/readyz` carries.
enum CDNSampleKeys {
    /// The CDN profiles' keys (the first signs, every one verifies).
    static func found(in profiles: CDNProfileSet, credentialsDirectory: String?) -> [String] {
        named(profiles.profiles.flatMap { $0.settings.keys.map { SecretFileBytes.path($0.path, credentialsDirectory: credentialsDirectory) } })
    }

    /// `--cat-key`'s keys.
    static func found(in catKeys: [CATKeySetting]) -> [String] {
        named(catKeys.map(\.path))
    }

    private static func named(_ paths: [String]) -> [String] {
        paths.compactMap { path in
            // The loaders read these files a moment ago; one that vanished since is no sample key.
            guard let data = FileManager.default.contents(atPath: path), data.count <= CATKeyFile.maximumFileBytes,
                let name = SampleKeys.name(ofKeyFile: [UInt8](data))
            else { return nil }
            return "\(name) (\(path))"
        }
    }
}
