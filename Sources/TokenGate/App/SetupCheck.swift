/// `tokengate check`'s report, assembled from each part of a gate's set-up in
/// the order the gate loads them at start.
enum SetupCheck {
    static func run(_ configuration: GateConfiguration) async -> SetupReport {
        SetupReport(sections: [
            SetupInspection.settings(configuration),
            SetupInspection.keys(configuration),
            SetupInspection.sessionSecrets(configuration),
            await ReplayStoreInspection.inspect(configuration.replay, credentialsDirectory: configuration.credentialsDirectory),
            SetupInspection.cdnProfiles(configuration),
            SetupInspection.catKeys(configuration),
        ])
    }
}
