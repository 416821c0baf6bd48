import CDNTokens

/// The gate's `--cdn-profile` files, read as a set: the profile's lifetime
/// defaults to the session lifetime (at most a day), its leeway is the
/// gate's, and a relative key path is read under `$CREDENTIALS_DIRECTORY`.
enum CDNProfileLoading {
    static func load(_ configuration: GateConfiguration) throws(CDNProfileError) -> CDNProfileSet {
        try CDNProfileSet.load(
            paths: configuration.cdnProfilePaths,
            defaults: CDNProfileDefaults(
                lifetime: min(Int64(configuration.sessionLifetimeSeconds), CDNProfileSettings.maximumLifetime),
                leeway: configuration.leewayMilliseconds / 1000
            ),
            credentialsDirectory: configuration.credentialsDirectory
        )
    }
}
