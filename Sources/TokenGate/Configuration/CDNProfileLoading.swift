import CDNTokens

/// The gate's `--cdn-profile` files, read as a set: the profile's lifetime
/// defaults to the session lifetime (at most a day), its leeway is the
/// gate's, and a relative key path is read under `$CREDENTIALS_DIRECTORY`.
enum CDNProfileLoading {
    static func load(_ configuration: GateConfiguration) throws(CDNProfileError) -> CDNProfileSet {
        let set = try CDNProfileSet.load(
            paths: configuration.cdnProfilePaths,
            defaults: CDNProfileDefaults(
                lifetime: min(Int64(configuration.sessionLifetimeSeconds), CDNProfileSettings.maximumLifetime),
                leeway: configuration.leewayMilliseconds / 1000
            ),
            credentialsDirectory: configuration.credentialsDirectory
        )
        // A manifest profile's URL is the gate's own route, carrying a playback session.
        if let manifest = set.profiles.first(where: { $0.settings.carrier == .manifest }) {
            if configuration.publicURL == nil {
                throw CDNProfileError("\(manifest.settings.source): carrier = manifest needs --public-url (the base URL players reach the gate by)")
            }
            if configuration.sessionSecretPaths.isEmpty {
                throw CDNProfileError(
                    "\(manifest.settings.source): carrier = manifest needs --session-secret (the manifest route takes a playback session)"
                )
            }
        }
        return set
    }
}
