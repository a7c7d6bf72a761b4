import Foundation
import Testing
import TestSupport
@testable import ImageCodec

/// Profiled decodes from many tasks at once: one transform cache, shared transforms and integer
/// tables. Run again under the thread sanitizer by scripts/test.sh (its name contains
/// "Concurrency").
@Suite("Colour management concurrency")
struct ColorConcurrencyTests {
    @Test("profiled decodes in parallel give what one decode at a time gives")
    func parallelDecodes() async throws {
        let profiles = ["DisplayP3.icc", "AdobeRGB-compatible.icc", "ProPhoto.icc", "P3-matrix-and-LUT.icc"]
        let inputs: [Data] = try profiles.map { name in
            var bitmap = TestImages.texture(width: 96, height: 64)
            bitmap.iccProfile = try ColorFixtures.profile(name)
            return try ImageEncoder.png(bitmap)
        }
        let decoder = ImageDecoder(options: DecodingOptions(maxPixelSize: 48))
        let expected = try inputs.map { try decoder.decode($0) }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for round in 0..<32 {
                group.addTask {
                    let index = round % inputs.count
                    return (try? decoder.decode(inputs[index])) == expected[index] ? 0 : 1
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}
