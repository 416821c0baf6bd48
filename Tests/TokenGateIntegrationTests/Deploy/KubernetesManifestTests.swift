import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport

/// `deploy/kubernetes/` checked offline (docs/DEPLOY.md, "Kubernetes"): every
/// manifest against the Kubernetes API schemas with `kubernetes-validate`
/// (PyPI), strictly, and the security properties a Deployment of the gate must
/// keep with `deploy/kubernetes/check.py` (non-root, read-only root, no
/// privilege, probes on /healthz and /readyz, Secrets read-only, no password in
/// the replay URL, selectors that match, a grace the drain fits in).
@Suite struct KubernetesManifestTests {
    static let folder = GateFixtures.repository.appendingPathComponent("deploy/kubernetes")
    /// The schema versions checked: the oldest and the newest the tool bundles that clusters run.
    static let versions = ["1.30", "1.37"]

    static var validator: String? {
        IndependentPython.path.map { URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("kubernetes-validate").path }
            .flatMap { FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil }
    }

    static var manifests: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasSuffix(".yaml") && $0 != "kustomization.yaml" }.sorted()
            .map { folder.appendingPathComponent($0).path }
    }

    @Test(
        .enabled(if: IndependentPython.available(["kubernetes_validate"]), "pip install kubernetes-validate"),
        arguments: versions
    )
    func everyManifestIsValidForKubernetes(_ version: String) throws {
        let validator = try #require(Self.validator, "kubernetes-validate is not beside the venv's python")
        #expect(Self.manifests.count >= 6, "namespace, settings, Deployment, Service, PodDisruptionBudget, NetworkPolicy")
        let result = try Subprocess.run(validator, ["--strict", "--quiet", "-k", version] + Self.manifests)
        #expect(result.status == 0, "\(result.text)")
        // A kind it does not know is only a WARN line with exit 0: the output must be empty.
        #expect(result.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(result.text)")
    }

    @Test(.enabled(if: IndependentPython.available(["yaml"]), "pip install kubernetes-validate (it brings PyYAML)"))
    func theDeploymentKeepsItsSecurityProperties() throws {
        let python = try #require(IndependentPython.path)
        let result = try Subprocess.run(python, [Self.folder.appendingPathComponent("check.py").path], separateErrors: true)
        #expect(result.status == 0, "\(result.errorText)")
        #expect(result.text.contains("checks passed"), "\(result.text)")
    }
}
