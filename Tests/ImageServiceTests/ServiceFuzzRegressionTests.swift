import Foundation
@_spi(Fuzzing) @testable import ImageService
import Testing
import TestSupport

/// The request path's fuzz seeds and findings (Fuzz/Corpus/service-request,
/// Tests/Fixtures/fuzz-regressions/service-request), through the fuzz target's own call: a
/// refusal or a sound job, never a trap.
@Suite("Service: fuzz regressions")
struct ServiceFuzzRegressionTests {
    @Test("every seed and finding of the request path")
    func requests() throws {
        let inputs = try FuzzInputs.files(for: "service-request")
        #expect(inputs.count >= 16, "the seed corpus is missing")
        for (_, data) in inputs { ServiceFuzzing.request(data) }
    }
}
